package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;
import java.util.EnumSet;
import java.util.Set;

/**
 * On-demand paging support ({@code struct ibv_odp_caps} of {@code ibv_query_device_ex(3)}): whether MRs may
 * be registered with {@link Access#ON_DEMAND}, and which operations each transport may run on them.
 *
 * @param supported whether ODP is supported at all ({@code IBV_ODP_SUPPORT})
 * @param implicit  whether implicit ODP (one MR over the whole address space) is supported
 * @param rc        the operations RC QPs may use on ODP memory
 * @param uc        the operations UC QPs may use on ODP memory
 * @param ud        the operations UD QPs may use on ODP memory
 * @param xrc       the operations XRC QPs may use on ODP memory ({@code xrc_odp_caps})
 */
public record OdpCapabilities(boolean supported, boolean implicit, Set<Operation> rc, Set<Operation> uc,
                              Set<Operation> ud, Set<Operation> xrc) {

    public OdpCapabilities {
        rc = Set.copyOf(rc);
        uc = Set.copyOf(uc);
        ud = Set.copyOf(ud);
        xrc = Set.copyOf(xrc);
    }

    /** An operation on ODP memory, C {@code enum ibv_odp_transport_cap_bits}. */
    public enum Operation {
        /** {@code IBV_ODP_SUPPORT_SEND}. */
        SEND(verbs_h.IBV_ODP_SUPPORT_SEND()),
        /** {@code IBV_ODP_SUPPORT_RECV}. */
        RECV(verbs_h.IBV_ODP_SUPPORT_RECV()),
        /** {@code IBV_ODP_SUPPORT_WRITE}. */
        WRITE(verbs_h.IBV_ODP_SUPPORT_WRITE()),
        /** {@code IBV_ODP_SUPPORT_READ}. */
        READ(verbs_h.IBV_ODP_SUPPORT_READ()),
        /** {@code IBV_ODP_SUPPORT_ATOMIC}. */
        ATOMIC(verbs_h.IBV_ODP_SUPPORT_ATOMIC()),
        /** {@code IBV_ODP_SUPPORT_SRQ_RECV}. */
        SRQ_RECV(verbs_h.IBV_ODP_SUPPORT_SRQ_RECV());

        private final int value;

        Operation(int value) {
            this.value = value;
        }

        /** The C bit. */
        public int value() {
            return value;
        }

        static EnumSet<Operation> fromMask(int mask) {
            EnumSet<Operation> set = EnumSet.noneOf(Operation.class);
            for (Operation o : values()) {
                if ((mask & o.value) != 0) {
                    set.add(o);
                }
            }
            return set;
        }
    }

    static OdpCapabilities of(long generalCaps, int rc, int uc, int ud, int xrc) {
        return new OdpCapabilities((generalCaps & verbs_h.IBV_ODP_SUPPORT()) != 0,
                (generalCaps & verbs_h.IBV_ODP_SUPPORT_IMPLICIT()) != 0,
                Operation.fromMask(rc), Operation.fromMask(uc), Operation.fromMask(ud), Operation.fromMask(xrc));
    }
}
