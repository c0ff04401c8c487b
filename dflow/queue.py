"""`dflow.queue`: TF's `tf.queue` namespace, the queue classes of the top level
(`tf.queue.FIFOQueue is tf.FIFOQueue`; see dflow/data/queues.py)."""

from .data.queues import FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]
