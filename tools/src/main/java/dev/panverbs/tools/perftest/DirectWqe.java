package dev.panverbs.tools.perftest;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.mlx5.DirectCompletionQueue;
import dev.panverbs.core.mlx5.DirectSendQueue;

/**
 * {@code --direct_wqe} (panverbs only): the send queues are posted through mlx5 Direct WQE
 * ({@link DirectSendQueue}: Java writes the ConnectX send ring and rings the doorbell) and the send CQ is polled
 * directly ({@link DirectCompletionQueue}); receives and the receive CQ stay on the verbs paths. Refused up front
 * on any device that is not an mlx5 device, and for connection types other than RC ({@link DeviceSetup#check}).
 */
final class DirectWqe {
    private DirectWqe() {}

    /** One QP's Direct WQE poster over the send template of {@link CoreQp}. */
    static final class Poster {
        private final DirectSendQueue dsq;
        private final PerftestTest.Verb verb;
        private final MemoryRegion mr;
        private final long mrBase;
        private final InlineSlices slices;
        private int length;
        private int rkey;
        private boolean inline;

        Poster(DirectSendQueue dsq, PerftestTest.Verb verb, MemoryRegion mr, InlineSlices slices) {
            this.dsq = dsq;
            this.verb = verb;
            this.mr = mr;
            this.mrBase = mr.address();
            this.slices = slices;
        }

        void configure(int len, int key, boolean inl) {
            this.length = len;
            this.rkey = key;
            this.inline = inl;
        }

        /** The same contract as {@code CoreQp.post}: 0, or ENOMEM when the send queue has no room for all. */
        int post(int count, long[] localAddr, long[] remoteAddr, long mask, long wrId) {
            if (dsq.room() < count) {
                return 12; // ENOMEM: the send queue is full
            }
            for (int k = 0; k < count; k++) {
                int flags = ((mask >>> k) & 1) != 0 ? SendFlag.SIGNALED_BIT : 0;
                if (inline) { // the builder form: inline data is added to the started WR
                    switch (verb) {
                        case WRITE -> dsq.rdmaWrite(wrId, flags, rkey, remoteAddr[k]);
                        case READ -> dsq.rdmaRead(wrId, flags, rkey, remoteAddr[k]);
                        case SEND -> dsq.send(wrId, flags);
                    }
                    dsq.inline(slices.at(localAddr[k] - mrBase));
                    continue;
                }
                // one SGE: the one-call form writes the whole WQE in one pass with one guard check
                long off = localAddr[k] - mrBase;
                switch (verb) {
                    case WRITE -> dsq.rdmaWrite(wrId, flags, rkey, remoteAddr[k], mr, off, length);
                    case READ -> dsq.rdmaRead(wrId, flags, rkey, remoteAddr[k], mr, off, length);
                    case SEND -> dsq.send(wrId, flags, mr, off, length);
                }
            }
            dsq.post();
            return 0;
        }
    }

    /** The send CQ polled through the CQ buffer. */
    static final class DirectCq extends PolledCq {
        private final DirectCompletionQueue cq;

        DirectCq(DirectCompletionQueue cq, CompletionChannel channel) {
            super(channel);
            this.cq = cq;
        }

        @Override
        public int poll(int max) {
            return cq.poll(arrayFor(max));
        }

        @Override
        public void requestNotify() {
            cq.reqNotify(false);
        }

        @Override
        void rearm(CompletionQueue got) {
            cq.eventArrived();
            cq.reqNotify(false);
        }
    }
}
