/**
 * panverbs: RDMA verbs for Java through the FFM API. Devices, protection domains, memory regions over
 * {@link java.lang.foreign.MemorySegment}s, completion queues, queue pairs, mlx5 direct verbs, and the RDMA connection manager ({@code dev.panverbs.core.cm}).
 */
module dev.panverbs.core {
    requires dev.panverbs.bindings;
    exports dev.panverbs.core;
    exports dev.panverbs.core.cm;
    exports dev.panverbs.core.mlx5;
}
