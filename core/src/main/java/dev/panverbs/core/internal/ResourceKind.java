package dev.panverbs.core.internal;

/**
 * The kinds of verbs objects, in the order a parent destroys its live children: first the objects that
 * depend on others, last the ones others depend on (as pyverbs' {@code PD.close} and {@code Context.close}
 * order their weak-reference lists).
 *
 * <p>Every real dependency is also registered as a parent → child edge, so closing any object closes its
 * dependants first whatever this order says; the order only makes a parent's cascade deterministic and
 * correct for dependencies the registry cannot see. Provider extensions (mlx5 DCT/DCI are still
 * {@link #QUEUE_PAIR}s) add constants here at the rank where they belong.
 */
public enum ResourceKind {
    /** {@code ibv_qp}: also a child of its CQs and SRQ. */
    QUEUE_PAIR("QueuePair"),
    /** {@code ibv_srq}: an XRC SRQ is also a child of its CQ and XRCD. Destroyed before the memory regions
     * and windows its posted receives name. */
    SHARED_RECEIVE_QUEUE("SharedReceiveQueue"),
    /** {@code ibv_flow}. */
    FLOW("Flow"),
    /** {@code ibv_ah}. */
    ADDRESS_HANDLE("AddressHandle"),
    /** {@code ibv_mw}. */
    MEMORY_WINDOW("MemoryWindow"),
    /** {@code mlx5dv_mkey} (an indirect mkey): destroyed before the memory regions its layout names. */
    INDIRECT_MKEY("IndirectMkey"),
    /** {@code ibv_mr}. */
    MEMORY_REGION("MemoryRegion"),
    /** {@code ibv_rwq_ind_table}. */
    RWQ_INDIRECTION_TABLE("RwqIndirectionTable"),
    /** {@code ibv_wq}. */
    WORK_QUEUE("WorkQueue"),
    /** {@code ibv_cq} / {@code ibv_cq_ex}: also a child of its completion channel. */
    COMPLETION_QUEUE("CompletionQueue"),
    /** {@code ibv_pd}, including parent domains. */
    PROTECTION_DOMAIN("ProtectionDomain"),
    /** {@code ibv_td}. */
    THREAD_DOMAIN("ThreadDomain"),
    /** {@code ibv_xrcd}. */
    XRC_DOMAIN("XrcDomain"),
    /** {@code ibv_dm}. */
    DEVICE_MEMORY("DeviceMemory"),
    /** {@code ibv_counters}. */
    COUNTERS("Counters"),
    /** {@code ibv_comp_channel}: destroyed after every CQ that uses it. */
    COMPLETION_CHANNEL("CompletionChannel"),
    /** A provider object that is none of the above (mlx5 DEVX objects, UARs, ...). */
    PROVIDER_OBJECT("ProviderObject"),
    /** {@code rdma_cm_id}: a child of its event channel; closes the QP it owns before {@code rdma_destroy_id}. */
    CM_ID("CmId"),
    /** {@code rdma_event_channel}: a root for rdma_cm; closes its IDs, then the contexts adopted from them. */
    EVENT_CHANNEL("EventChannel"),
    /** {@code ibv_context}: the root. */
    CONTEXT("Context");

    private final String typeName;

    ResourceKind(String typeName) {
        this.typeName = typeName;
    }

    /** The public Java type name used in messages, e.g. {@code ProtectionDomain}. */
    public String typeName() {
        return typeName;
    }
}
