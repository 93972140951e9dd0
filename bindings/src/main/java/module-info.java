/**
 * Raw FFM bindings of rdma-core 44, one package per native library, all readable by {@code dev.panverbs.core}
 * only, so that no generated type reaches a public signature:
 * <ul>
 *   <li>{@code dev.panverbs.bindings}: what every library's bindings share: soname loading
 *       ({@code NativeLibraries}), errno capture ({@code Errno}), downcall linking ({@code Downcalls},
 *       {@code ProviderDowncalls} for provider function pointers) and absolute-address reads
 *       ({@code NativeMemory});</li>
 *   <li>{@code dev.panverbs.bindings.ibverbs}: libibverbs ({@code <infiniband/verbs.h>}): the exported
 *       functions and the Java twins of the header's {@code static inline} verbs;</li>
 *   <li>{@code dev.panverbs.bindings.mlx5}: libmlx5 ({@code <infiniband/mlx5dv.h>}): the exported
 *       {@code mlx5dv_*} functions and the twins of its inlines;</li>
 *   <li>{@code dev.panverbs.bindings.rdmacm}: librdmacm ({@code <rdma/rdma_cma.h>}): the RDMA connection
 *       manager's exported functions;</li>
 *   <li>{@code dev.panverbs.bindings.libc}: the libc calls that waiting for verbs events needs
 *       ({@code fcntl}, {@code poll});</li>
 *   <li>{@code dev.panverbs.bindings.verbs}, {@code dev.panverbs.bindings.mlx5dv},
 *       {@code dev.panverbs.bindings.rdmacma}: jextract output
 *       ({@code src-gen/}).</li>
 * </ul>
 */
module dev.panverbs.bindings {
    exports dev.panverbs.bindings to dev.panverbs.core;
    exports dev.panverbs.bindings.ibverbs to dev.panverbs.core;
    exports dev.panverbs.bindings.mlx5 to dev.panverbs.core;
    exports dev.panverbs.bindings.libc to dev.panverbs.core;
    exports dev.panverbs.bindings.verbs to dev.panverbs.core;
    exports dev.panverbs.bindings.mlx5dv to dev.panverbs.core;
    exports dev.panverbs.bindings.rdmacm to dev.panverbs.core;
    exports dev.panverbs.bindings.rdmacma to dev.panverbs.core;
}
