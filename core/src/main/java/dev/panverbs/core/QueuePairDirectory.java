package dev.panverbs.core;

/**
 * The QPs that report to one CQ, by QP number: how a completion's {@code qp_num} finds the QP whose outstanding
 * work requests it retires. Copy-on-write open addressing: attaching a QP (control path) copies the table; the
 * poll path reads one volatile snapshot and probes an {@code int[]}, with no boxing and no allocation. The last hit
 * is cached, since a CQ usually serves one QP.
 */
final class QueuePairDirectory {
    private record Table(int[] keys, QueuePair[] values, int size) {}

    private volatile Table table = new Table(new int[8], new QueuePair[8], 0);
    private QueuePair last; // racy cache, written and read by the poller only

    QueuePair get(int qpNum) {
        QueuePair l = last;
        if (l != null && l.qpNum == qpNum && !l.detached) {
            return l;
        }
        Table t = table;
        int mask = t.keys.length - 1;
        for (int i = mix(qpNum) & mask, n = 0; n <= mask; i = (i + 1) & mask, n++) {
            QueuePair v = t.values[i];
            if (v == null) {
                return null;
            }
            if (t.keys[i] == qpNum) {
                last = v;
                return v;
            }
        }
        return null;
    }

    /** The number of attached QPs. */
    int size() {
        return table.size;
    }

    /** The only attached QP, or null when there are none or several. */
    QueuePair single() {
        Table t = table;
        if (t.size != 1) {
            return null;
        }
        for (QueuePair v : t.values) {
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    synchronized void attach(QueuePair qp) {
        rebuild(qp, null);
    }

    synchronized void detach(QueuePair qp) {
        last = null;
        rebuild(null, qp);
    }

    private void rebuild(QueuePair add, QueuePair remove) {
        Table old = table;
        int size = old.size + (add != null ? 1 : 0) - (remove != null ? 1 : 0);
        int cap = 8;
        while (cap < size * 2) {
            cap <<= 1;
        }
        int[] keys = new int[cap];
        QueuePair[] values = new QueuePair[cap];
        int n = 0;
        for (QueuePair v : old.values) {
            if (v != null && v != remove) {
                put(keys, values, v);
                n++;
            }
        }
        if (add != null) {
            put(keys, values, add);
            n++;
        }
        table = new Table(keys, values, n);
    }

    private static void put(int[] keys, QueuePair[] values, QueuePair qp) {
        int mask = keys.length - 1;
        int i = mix(qp.qpNum) & mask;
        while (values[i] != null) {
            i = (i + 1) & mask;
        }
        keys[i] = qp.qpNum;
        values[i] = qp;
    }

    private static int mix(int k) {
        return k * 0x9E3779B9 >>> 7;
    }
}
