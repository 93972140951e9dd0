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
            if (inline) {
                postInline(count, localAddr, remoteAddr, mask, wrId);
            } else if (count == 1) { // perftest's default list of one: the one-call form
                oneCall(wrId, (mask & 1) != 0 ? SendFlag.SIGNALED_BIT : 0, localAddr[0] - mrBase, remoteAddr[0]);
            } else {
                postList(count, localAddr, remoteAddr, mask, wrId);
            }
            dsq.post();
            return 0;
        }

        /**
         * A post list ({@code -l}) as bursts: each run of WRs whose local and remote addresses step by one stride and
         * that ends at a signaled WR (every {@code cq_mod}-th) or at the list's end is one {@code *Burst} call (every
         * WR with wr_id {@code wrId}, as C perftest's lists): the same WQEs, records and completions as its one-call
         * WRs, the key, range, guard and room checked once per run. The one doorbell per list stays C's.
         */
        private void postList(int count, long[] localAddr, long[] remoteAddr, long mask, long wrId) {
            int s = 0;
            while (s < count) {
                int e = s; // the run is s..e
                long ls = 0;
                long rs = 0;
                if (((mask >>> s) & 1) == 0 && s + 1 < count) {
                    ls = localAddr[s + 1] - localAddr[s];
                    rs = remoteAddr[s + 1] - remoteAddr[s];
                    e = s + 1;
                    while (((mask >>> e) & 1) == 0 && e + 1 < count && localAddr[e + 1] - localAddr[e] == ls
                            && remoteAddr[e + 1] - remoteAddr[e] == rs) {
                        e++;
                    }
                }
                int n = e - s + 1;
                long off = localAddr[s] - mrBase;
                if (n == 1 || ls < 0 || rs < 0) { // a burst's strides are non-negative
                    for (int k = s; k <= e; k++) {
                        oneCall(wrId, ((mask >>> k) & 1) != 0 ? SendFlag.SIGNALED_BIT : 0, localAddr[k] - mrBase,
                                remoteAddr[k]);
                    }
                } else {
                    int last = ((mask >>> e) & 1) != 0 ? SendFlag.SIGNALED_BIT : 0;
                    switch (verb) {
                        case WRITE -> dsq.rdmaWriteBurst(wrId, 0, n, 0, last, rkey, remoteAddr[s], rs, mr, off, ls,
                                length);
                        case READ -> dsq.rdmaReadBurst(wrId, 0, n, 0, last, rkey, remoteAddr[s], rs, mr, off, ls,
                                length);
                        case SEND -> dsq.sendBurst(wrId, 0, n, 0, last, mr, off, ls, length);
                    }
                }
                s = e + 1;
            }
        }

        /** One SGE: the one-call form writes the whole WQE in one pass with one guard check. */
        private void oneCall(long wrId, int flags, long off, long remote) {
            switch (verb) {
                case WRITE -> dsq.rdmaWrite(wrId, flags, rkey, remote, mr, off, length);
                case READ -> dsq.rdmaRead(wrId, flags, rkey, remote, mr, off, length);
                case SEND -> dsq.send(wrId, flags, mr, off, length);
            }
        }

        /** Inline data: the builder form (inline data is added to the started WR). */
        private void postInline(int count, long[] localAddr, long[] remoteAddr, long mask, long wrId) {
            for (int k = 0; k < count; k++) {
                int flags = ((mask >>> k) & 1) != 0 ? SendFlag.SIGNALED_BIT : 0;
                switch (verb) {
                    case WRITE -> dsq.rdmaWrite(wrId, flags, rkey, remoteAddr[k]);
                    case READ -> dsq.rdmaRead(wrId, flags, rkey, remoteAddr[k]);
                    case SEND -> dsq.send(wrId, flags);
                }
                dsq.inline(slices.at(localAddr[k] - mrBase));
            }
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
