"""word2vec skip-gram with NCE loss (TF1's word2vec_basic.py), ported by changing the import, on a
synthetic corpus: sentences drawn from two topics, so words of one topic share contexts.

The embedding lookup's gradient is an IndexedSlices: each step updates only the rows of the words in
the batch (and the NCE weights of the true and sampled words), in place.
"""

import numpy as np

import dflow as tf

vocabulary_size, embedding_size, batch_size, num_sampled, skip_window = 40, 16, 64, 8, 1
rng = np.random.default_rng(0)
# two topics of 20 words; each sentence of 12 words stays in one topic
corpus = np.concatenate([rng.integers(0, 20, 12) + 20 * rng.integers(0, 2) for _ in range(400)])


def generate_batch():
    centres = rng.integers(skip_window, len(corpus) - skip_window, batch_size)
    offsets = rng.choice([-1, 1], batch_size)
    return corpus[centres].astype(np.int32), corpus[centres + offsets].reshape(-1, 1).astype(np.int64)


graph = tf.Graph()
with graph.as_default():
    with tf.name_scope("inputs"):
        train_inputs = tf.placeholder(tf.int32, shape=[batch_size])
        train_labels = tf.placeholder(tf.int64, shape=[batch_size, 1])
    with tf.name_scope("embeddings"):
        embeddings = tf.Variable(tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0, seed=1))
        embed = tf.nn.embedding_lookup(embeddings, train_inputs)
    with tf.name_scope("weights"):
        nce_weights = tf.Variable(tf.truncated_normal([vocabulary_size, embedding_size],
                                                      stddev=1.0 / np.sqrt(embedding_size), seed=2))
    with tf.name_scope("biases"):
        nce_biases = tf.Variable(tf.zeros([vocabulary_size]))
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=train_labels,
                                             inputs=embed, num_sampled=num_sampled, num_classes=vocabulary_size))
    with tf.name_scope("optimizer"):
        optimizer = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
    normalized_embeddings = embeddings / norm
    similarity = tf.matmul(normalized_embeddings, normalized_embeddings, transpose_b=True)
    init = tf.global_variables_initializer()

with tf.Session(graph=graph) as session:
    init.run()
    first = None
    for _ in range(300):
        inputs, labels = generate_batch()
        _, loss_val = session.run([optimizer, loss], feed_dict={train_inputs: inputs, train_labels: labels})
        first = loss_val if first is None else first
    sim = similarity.eval()

topic = np.arange(vocabulary_size) // 20
nearest = [max((v for v in range(vocabulary_size) if v != w), key=lambda v: sim[w, v]) for w in range(vocabulary_size)]
agree = np.mean([topic[n] == topic[w] for w, n in enumerate(nearest)])
print(f"loss {first:.3f} -> {loss_val:.3f}; nearest neighbour in the same topic for {agree:.0%} of the words")
assert loss_val < first and agree >= 0.9
