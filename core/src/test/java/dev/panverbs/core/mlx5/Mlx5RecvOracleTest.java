package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link RecvWriter} against libmlx5's {@code mlx5_post_recv}: random receive chains (0..max_gs SGEs, empty ones
 * included, which take no segment; the terminator when fewer than max_gs were written; strides of 16..128 bytes;
 * rings of 4..64 WQEs entered at random counters so the index and the 16-bit doorbell counter wrap; full queues
 * refused with ENOMEM at the WR that overflows). The WQE bytes written, a hash of the whole queue, the doorbell
 * record, the return code, the refused WR and the head must be equal.
 */
class Mlx5RecvOracleTest {
    private static final int ENOMEM = 12;

    @Test
    void postRecvEqualsLibmlx5ForRandomChains() {
        SplittableRandom rnd = new SplittableRandom(0x7ec7L);
        record Chain(int tail, List<long[]> addr, List<int[]> len, List<int[]> lkey, List<Long> wrId) {}
        record Rq(int cnt, int stride, int maxPost, int head, List<Chain> chains) {}
        List<Rq> rqs = new ArrayList<>();
        StringBuilder script = new StringBuilder("Q 64 16 4 64 0x1234 0 256 1 1 0 0\n");
        int chains = 0;
        while (chains < 10_000) {
            int cnt = 4 << rnd.nextInt(5);
            int stride = 16 << rnd.nextInt(4);
            int maxGs = stride / 16;
            int[] starts = {0, cnt - 1, 0xFFFE, rnd.nextInt()};
            int head = starts[rnd.nextInt(starts.length)];
            List<Chain> list = new ArrayList<>();
            script.append("U ").append(cnt).append(' ').append(stride).append(' ').append(cnt).append(' ')
                    .append(Integer.toUnsignedString(head)).append('\n');
            int posted = head;
            for (int k = 0; k < 10; k++) {
                int n = 1 + rnd.nextInt(cnt + 2);
                int tail = rnd.nextInt(6) == 0 ? posted - cnt / 2 : posted; // sometimes leave WRs outstanding
                Chain c = new Chain(tail, new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
                StringBuilder lines = new StringBuilder();
                for (int i = 0; i < n; i++) {
                    int nsge = rnd.nextInt(maxGs + 1);
                    long[] a = new long[nsge];
                    int[] l = new int[nsge];
                    int[] key = new int[nsge];
                    long wrId = rnd.nextLong() & Long.MAX_VALUE;
                    lines.append("W ").append(wrId).append(" 0 0 0 0 0 0 0 ").append(nsge);
                    for (int j = 0; j < nsge; j++) {
                        a[j] = rnd.nextLong();
                        l[j] = rnd.nextInt(5) == 0 ? 0 : 1 + rnd.nextInt(1 << 16);
                        key[j] = rnd.nextInt();
                        lines.append(' ').append(Long.toUnsignedString(a[j])).append(' ').append(l[j]).append(' ')
                                .append(Integer.toUnsignedString(key[j]));
                    }
                    lines.append('\n');
                    c.addr.add(a);
                    c.len.add(l);
                    c.lkey.add(key);
                    c.wrId.add(wrId);
                }
                script.append("K ").append(Integer.toUnsignedString(tail)).append('\n');
                script.append("G ").append(n).append('\n').append(lines);
                list.add(c);
                posted += n; // an upper bound; the comparison reads the real head from both sides
                chains++;
            }
            rqs.add(new Rq(cnt, stride, cnt, head, list));
        }
        Iterator<String> out = Mlx5Oracle.run(script).iterator();
        int overflows = 0;
        int terminators = 0;
        try (Arena arena = Arena.ofConfined()) {
            for (Rq r : rqs) {
                MemorySegment buf = arena.allocate((long) r.cnt * r.stride, 64).fill((byte) 0xEE);
                MemorySegment dbrec = arena.allocate(8).fill((byte) 0);
                RecvWriter w = new RecvWriter(buf, r.cnt, r.stride, dbrec, r.maxPost, r.head);
                for (Chain c : r.chains) {
                    w.tail = c.tail;
                    int old = w.head;
                    int rc = 0;
                    int bad = -1;
                    for (int i = 0; i < c.wrId.size(); i++) {
                        if (w.full()) {
                            rc = ENOMEM;
                            bad = i;
                            break;
                        }
                        w.write(c.addr.get(i).length, 0, c.addr.get(i), c.len.get(i), c.lkey.get(i));
                        int written = 0;
                        for (int l : c.len.get(i)) {
                            written += l != 0 ? 1 : 0;
                        }
                        terminators += written < w.maxGs() ? 1 : 0;
                    }
                    w.ring();
                    overflows += rc == ENOMEM ? 1 : 0;
                    assertThat("R " + rc + " " + bad + " " + Integer.toUnsignedString(w.head)).isEqualTo(out.next());
                    String[] s = out.next().split(" ", 4);
                    int n = Integer.parseInt(s[2]);
                    byte[] mine = new byte[n * r.stride];
                    for (int i = 0; i < n; i++) {
                        MemorySegment.copy(buf, ValueLayout.JAVA_BYTE, (long) ((old + i) & (r.cnt - 1)) * r.stride,
                                mine, i * r.stride, r.stride);
                    }
                    assertThat(Mlx5Oracle.hex(mine)).isEqualTo(s.length > 3 ? s[3] : "");
                    assertThat(Long.toHexString(Mlx5Oracle.fnv(buf.toArray(ValueLayout.JAVA_BYTE))))
                            .isEqualTo(Long.toHexString(Long.parseUnsignedLong(out.next().substring(2), 16)));
                    assertThat("D " + Mlx5Oracle.hex(dbrec.toArray(ValueLayout.JAVA_BYTE))).isEqualTo(out.next());
                }
            }
        }
        assertThat(out.hasNext()).isFalse();
        assertThat(overflows).as("chains refused by a full queue").isGreaterThan(100);
        assertThat(terminators).as("WQEs ended by a terminator segment").isGreaterThan(1000);
    }
}
