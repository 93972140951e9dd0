/**
 * Raw FFM bindings of libibverbs and libmlx5 (rdma-core 44): jextract output ({@code src-gen/}) and
 * the hand-written Java twins of the header's {@code static inline} verbs. Only {@code dev.panverbs.core}
 * may read it, so that no generated type reaches a public signature.
 */
module dev.panverbs.bindings {
    exports dev.panverbs.bindings to dev.panverbs.core;
    exports dev.panverbs.bindings.verbs to dev.panverbs.core;
    exports dev.panverbs.bindings.mlx5dv to dev.panverbs.core;
}
