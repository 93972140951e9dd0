/*
 * perf/mlx5-callgrind's driver: loads the in-process libmlx5 benchmark library (perf/target/mlx5-inproc/
 * libmlx5inproc.so, built by perf/run --compare-mlx5), sets up the same fake QP, CQ, memory and device model as
 * Mlx5InProcess (256 WQEBBs and CQEs, one registered local and remote buffer), and runs one of its ops
 * (mlx5ip_post_send: mlx5_post_send + model + mlx5_poll_cq; mlx5ip_direct: the hand-written C writer and CQE
 * reader) ITERS times with 16 RDMA WRITEs, all signaled (1) or the last (0), for valgrind --tool=callgrind.
 *
 *   mlx5_callgrind LIB ALL_SIGNALED ITERS OP
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
typedef uint64_t (*opf)(int, int, uint64_t, uint64_t, uint32_t, uint64_t, uint32_t);
int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: mlx5_callgrind LIB ALL_SIGNALED ITERS OP\n"); return 1; }
    int all = atoi(argv[2]), iters = atoi(argv[3]);
    const char *which = argv[4];
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    void (*reset)(void) = dlsym(h, "model_reset");
    void (*reg)(uint32_t, uint64_t, uint64_t, int) = dlsym(h, "model_reg");
    void (*mqp)(uint8_t *, uint32_t, uint32_t *, uint32_t, uint8_t *, uint32_t, uint8_t *, uint32_t, uint32_t) = dlsym(h, "model_qp");
    int (*setup)(uint8_t *, uint32_t, uint32_t *, uint8_t *, uint32_t, uint32_t, uint8_t *, uint32_t, uint32_t *) = dlsym(h, "mlx5ip_setup");
    opf op = dlsym(h, which);
    if (!reset || !reg || !mqp || !setup || !op) { fprintf(stderr, "%s: missing symbols\n", argv[1]); return 1; }
    uint32_t n = 256, bfsz = 256;
    uint8_t *sq = aligned_alloc(4096, n * 64), *cq = aligned_alloc(4096, n * 64), *rcq = aligned_alloc(64, 64 * 64);
    uint8_t *bf = aligned_alloc(64, 2 * bfsz), *local = aligned_alloc(4096, 1 << 16), *remote = aligned_alloc(4096, 1 << 16);
    uint32_t *db = calloc(2, 4), *cqdb = calloc(2, 4);
    memset(sq, 0xEE, n * 64); memset(cq, 0, n * 64); memset(rcq, 0, 64 * 64);
    for (uint32_t k = 0; k < n; k++) cq[k * 64 + 63] = 0xF1;
    for (uint32_t k = 0; k < 64; k++) rcq[k * 64 + 63] = 0xF1;
    reset();
    reg(0x1234, (uint64_t) local, 1 << 16, 1);                 /* IBV_ACCESS_LOCAL_WRITE */
    reg(0x5678, (uint64_t) remote, 1 << 16, 1 | 2 | 4 | 8);    /* + REMOTE_WRITE, READ, ATOMIC */
    mqp(sq, n, db, 0x4242, cq, n, rcq, 64, 0x999);
    if (setup(sq, n, db, bf, bfsz, 0x4242, cq, n, cqdb)) return 2;
    uint64_t s = 0;
    for (int i = 0; i < iters; i++) {
        uint64_t r = op(16, all, 1000 + i * 16, (uint64_t) local, 0x1234, (uint64_t) remote, 0x5678);
        if (r == UINT64_MAX) { fprintf(stderr, "op failed at %d\n", i); return 3; }
        s += r;
    }
    printf("%llu\n", (unsigned long long) s);
    return 0;
}
