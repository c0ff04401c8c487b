"""`dflow.linalg`: TF1's `tf.linalg` namespace, TF's `linalg.*` spellings of the matrix ops.

Each name is the very function of the top level (`tf.linalg.inv is tf.matrix_inverse`), defined
in dflow/kernels/matrix_ops.py (dense matrix ops) and dflow/kernels/linalg_ops.py (contractions);
pinv, matrix_rank, matvec and normalize are composites (dflow/kernels/matrix_composites.py); the
LU family is dflow/kernels/lu_ops.py, sqrtm and logm dflow/kernels/matrix_functions.py, the
tridiagonal names dflow/kernels/tridiagonal_ops.py.
The LinearOperator classes are dflow/kernels/linear_operator.py (a subset of TF's family).
Names dflow does not implement are absent (AttributeError naming docs/tf1_coverage.md).
"""

from .kernels import cross_ops as _cross
from .kernels import linalg_ops as _contractions
from .kernels import linear_operator as _lo
from .kernels import lu_ops as _lu
from .kernels import matrix_composites as _mc
from .kernels import matrix_functions as _mf
from .kernels import matrix_ops as _m
from .kernels import tridiagonal_ops as _tri
from .kernels.manip_ops import transpose
from .kernels.rearrange_ops import diag as tensor_diag
from .kernels.rearrange_ops import diag_part as tensor_diag_part
from .nn import l2_normalize
from .tf1_names import missing_attribute as _missing_attribute
from .train.clip_ops import global_norm

adjoint = _m.adjoint
band_part = _m.matrix_band_part
cholesky = _m.cholesky
cholesky_solve = _m.cholesky_solve
cross = _cross.cross
det = _m.matrix_determinant
diag = _m.matrix_diag
diag_part = _m.matrix_diag_part
eigh = _m.self_adjoint_eig
eigvalsh = _m.self_adjoint_eigvals
einsum = _contractions.einsum
expm = _m.matrix_exponential
eye = _m.eye
inv = _m.matrix_inverse
logdet = _m.logdet
lstsq = _m.matrix_solve_ls
matmul = _contractions.matmul
matrix_transpose = _m.matrix_transpose
norm = _contractions.norm
qr = _m.qr
set_diag = _m.matrix_set_diag
slogdet = _m.log_matrix_determinant
solve = _m.matrix_solve
svd = _m.svd
tensordot = _contractions.tensordot
trace = _m.trace
triangular_solve = _m.matrix_triangular_solve
matrix_rank = _mc.matrix_rank
matvec = _mc.matvec
normalize = _mc.normalize
pinv = _mc.pinv
lu = _lu.lu
lu_solve = _lu.lu_solve
lu_reconstruct = _lu.lu_reconstruct
lu_matrix_inverse = _lu.lu_matrix_inverse
sqrtm = _mf.matrix_square_root
logm = _mf.matrix_logarithm
tridiagonal_solve = _tri.tridiagonal_solve
tridiagonal_matmul = _tri.tridiagonal_matmul
eigh_tridiagonal = _tri.eigh_tridiagonal
LinearOperator = _lo.LinearOperator
LinearOperatorAdjoint = _lo.LinearOperatorAdjoint
LinearOperatorComposition = _lo.LinearOperatorComposition
LinearOperatorDiag = _lo.LinearOperatorDiag
LinearOperatorFullMatrix = _lo.LinearOperatorFullMatrix
LinearOperatorIdentity = _lo.LinearOperatorIdentity
LinearOperatorInversion = _lo.LinearOperatorInversion
LinearOperatorLowerTriangular = _lo.LinearOperatorLowerTriangular
LinearOperatorScaledIdentity = _lo.LinearOperatorScaledIdentity
LinearOperatorZeros = _lo.LinearOperatorZeros

__all__ = ["adjoint", "band_part", "cholesky", "cholesky_solve", "det", "diag", "diag_part", "eigh", "eigvalsh",
           "einsum", "expm", "eye", "global_norm", "inv", "logdet", "lstsq", "matmul", "matrix_transpose", "norm", "qr",
           "set_diag", "slogdet", "solve", "svd", "tensordot", "trace", "transpose", "triangular_solve", "l2_normalize", "matrix_rank", "matvec",
           "normalize", "pinv", "tensor_diag", "tensor_diag_part", "lu", "lu_solve", "lu_reconstruct",
           "lu_matrix_inverse", "sqrtm", "logm", "tridiagonal_solve", "tridiagonal_matmul", "eigh_tridiagonal",
           "LinearOperator", "LinearOperatorAdjoint", "LinearOperatorComposition", "LinearOperatorDiag",
           "LinearOperatorFullMatrix", "LinearOperatorIdentity", "LinearOperatorInversion",
           "LinearOperatorLowerTriangular", "LinearOperatorScaledIdentity", "LinearOperatorZeros"]

__getattr__ = _missing_attribute(__name__)
