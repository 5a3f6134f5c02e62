// How many threads one op may use (tf.config.threading's intra-op setting).
#pragma once

namespace ag {

// Large elementwise, fused and reduction kernels split their work over `n`
// threads (this one and n - 1 pool threads); OpenBLAS's matmul uses the same
// count. The default is 1: every kernel runs on the calling thread. Our
// kernels' results do not depend on `n` (reductions fold fixed blocks in a
// fixed order); OpenBLAS's float matmul may round differently. Call
// it while no function or op is running; `n` must be at least 1.
void set_intra_op_threads(int n);
int intra_op_threads();

}  // namespace ag
