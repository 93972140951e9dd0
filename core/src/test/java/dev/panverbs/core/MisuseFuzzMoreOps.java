package dev.panverbs.core;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The window, poll, other-thread and fault-injection operations of {@link MisuseFuzzOps} (same rules). */
final class MisuseFuzzMoreOps {
    private MisuseFuzzMoreOps() {
    }

    static void windowOp(MisuseFuzzOps w) {
        MemoryWindow mw = w.pick(w.mws);
        QueuePair qp = w.pick(w.qps);
        MemoryRegion mr = w.pick(w.mrs);
        if (mw == null || qp == null) {
            w.newWindow();
            return;
        }
        long id = w.nextWrId++;
        switch (w.rnd.nextInt(3)) {
            case 0 -> {
                w.log("bind " + mw + " on " + qp + " to " + mr);
                mw.bind(qp, id, SendFlag.SIGNALED_BIT, mr, w.offset(), w.length(), w.access());
            }
            case 1 -> {
                w.log("chain bindMw " + mw + " on " + qp + " to " + mr);
                qp.sendRequests().bindMw(id, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), mr,
                        w.offset(), w.length(), w.access()).post();
            }
            default -> {
                w.log("chain localInv " + mw + " on " + qp);
                qp.sendRequests().localInv(id, SendFlag.SIGNALED_BIT, mw).post();
            }
        }
    }

    static void poll(MisuseFuzzOps w) {
        CompletionQueue cq = w.pick(w.cqs);
        WorkCompletions wcs = w.pick(w.wcs);
        int op = w.rnd.nextInt(6);
        if (op == 0 || cq != w.ecq) {
            w.log("poll " + cq + " into " + wcs.capacity());
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs.get(i);
                for (MemoryWindow mw : w.mws) {
                    mw.completed(wc);
                }
            }
            if (w.rnd.nextInt(4) == 0) {
                int i = w.rnd.nextInt(n + 2) - 1;
                w.log("  get(" + i + ") of " + n);
                wcs.get(i).wrId();
            }
            return;
        }
        switch (op) {
            case 1, 2 -> {
                w.log("startPoll " + w.ecq);
                if (w.ecq.startPoll()) {
                    w.ecq.wrId();
                }
            }
            case 3 -> {
                w.log("nextPoll " + w.ecq);
                if (w.ecq.nextPoll()) {
                    w.ecq.readByteLen();
                }
            }
            case 4 -> {
                w.log("endPoll " + w.ecq);
                w.ecq.endPoll();
            }
            default -> {
                w.log("wrId/status outside or inside a pass " + w.ecq);
                w.ecq.status();
            }
        }
    }

    /** A call from another thread: post, start or submit a batch, poll, close a region, inline a confined segment. */
    static void crossThread(MisuseFuzzOps w) throws Exception {
        QueuePair qp = w.pick(w.qps);
        int op = w.rnd.nextInt(5);
        MemoryRegion mr = w.pick(w.mrs);
        CompletionQueue cq = w.pick(w.cqs);
        WorkCompletions wcs = w.pick(w.wcs);
        PostBatch b = qp == null ? null : w.batches.get(qp);
        MemorySegment data = w.inlineData();
        long id = w.nextWrId++;
        w.log("other thread: " + switch (op) {
            case 0 -> "post send on " + qp;
            case 1 -> "startSend/submit on " + qp;
            case 2 -> "submit the batch of " + qp;
            case 3 -> "poll " + cq;
            default -> "close " + mr;
        });
        Future<?> f = w.other.submit(() -> {
            switch (op) {
                case 0 -> {
                    if (qp != null) {
                        qp.sendRequests().send(id, SendFlag.SIGNALED_BIT).inline(data).post();
                    }
                }
                case 1 -> {
                    if (qp != null) {
                        try (PostBatch ob = qp.startSend()) {
                            ob.send(id, SendFlag.SIGNALED_BIT).setSge(mr, 0, 64);
                            ob.submit();
                        }
                    }
                }
                case 2 -> {
                    if (b != null) {
                        b.submit();
                    }
                }
                case 3 -> cq.poll(wcs);
                default -> {
                    if (mr != null) {
                        mr.close();
                    }
                }
            }
            return null;
        });
        try {
            f.get(MisuseFuzzOps.CROSS_THREAD_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("hang: the other thread's call did not return within "
                    + MisuseFuzzOps.CROSS_THREAD_TIMEOUT_S + " s", e);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw new AssertionError("the other thread threw an Error", e.getCause());
        }
    }

    static void inject(MisuseFuzzOps w) {
        QueuePair qp = w.pick(w.qps);
        if (qp == null || qp.isClosed()) {
            return;
        }
        if (w.rnd.nextBoolean()) {
            w.log("failNext " + qp);
            w.fake.failNext(qp, dev.panverbs.bindings.verbs.verbs_h.IBV_WC_REM_ACCESS_ERR());
        } else if (qp.receiveQueue != null) {
            w.log("flushReceives " + qp);
            w.fake.flushReceives(qp);
        }
    }
}
