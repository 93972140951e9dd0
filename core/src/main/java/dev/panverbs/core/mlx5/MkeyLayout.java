package dev.panverbs.core.mlx5;

import dev.panverbs.core.MemoryRegion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a UMR makes an {@link IndirectMkey} translate to: its layout. Either {@link Interleaved} (rdma-core's
 * {@code mlx5dv_wr_mr_interleaved}: a repeat block, PRM "strided block" KLM format) or {@link SgeList}
 * ({@code mlx5dv_wr_mr_list}: the concatenation of SGEs, PRM KLMs). The mkey's address space starts at 0 and is
 * {@link #byteLength()} bytes long, as libmlx5 computes it ({@code mkey->length}).
 *
 * <p>Every entry names a {@link MemoryRegion} of the mkey's protection domain and a range inside it; the memory an
 * entry lets the device reach is checked to lie inside its region (for an interleaved entry: all {@code repeatCount}
 * strides of it), and the regions stay registered while the mkey may translate into them (see {@link IndirectMkey}).
 */
public sealed interface MkeyLayout permits MkeyLayout.Interleaved, MkeyLayout.SgeList {

    /** How many entries the layout has ({@code num_interleaved} / {@code num_sges}). */
    int entryCount();

    /** The mkey's length once configured: {@code repeatCount * sum(bytesCount)}, or {@code sum(length)}. */
    long byteLength();

    /** The distinct regions the layout names, in order of first appearance. */
    List<MemoryRegion> regions();

    /**
     * One entry of an interleaved layout: C {@code struct mlx5dv_mr_interleaved { uint64_t addr; uint32_t
     * bytes_count; uint32_t bytes_skip; uint32_t lkey; }} with {@code addr = region.address() + offset} and
     * {@code lkey = region.lkey()}. Each repetition takes {@code bytesCount} bytes, then moves on by
     * {@code bytesCount + bytesSkip} (the PRM's 16-bit stride: at most 65535).
     */
    record Entry(MemoryRegion region, long offset, int bytesCount, int bytesSkip) {
        public Entry {
            Objects.requireNonNull(region, "mlx5dv_mr_interleaved: region");
            if (offset < 0 || bytesCount <= 0 || bytesSkip < 0 || bytesCount + (long) bytesSkip > 0xFFFF) {
                throw new IllegalArgumentException("mlx5dv_mr_interleaved: offset " + offset + ", bytesCount "
                        + bytesCount + ", bytesSkip " + bytesSkip + ": the offset must be >= 0, bytesCount > 0, "
                        + "bytesSkip >= 0 and the stride bytesCount + bytesSkip at most 65535 (the repeat entry's "
                        + "16-bit byte_count and stride, PRM)");
            }
        }

        /** The bytes of the region the device may reach through this entry over {@code repeatCount} repetitions. */
        long span(long repeatCount) {
            return (repeatCount - 1) * (bytesCount + (long) bytesSkip) + bytesCount;
        }
    }

    /** One entry of a list layout: C {@code struct ibv_sge} with {@code addr = region.address() + offset}. */
    record Sge(MemoryRegion region, long offset, int length) {
        public Sge {
            Objects.requireNonNull(region, "ibv_sge: region");
            if (offset < 0 || length <= 0) { // a KLM byte_count of 0 is not "nothing" (mlx5 data segments: 2 GiB)
                throw new IllegalArgumentException("ibv_sge: offset " + offset + " and length " + length
                        + ": the offset must be >= 0 and the length > 0 (libmlx5 copies the length into the KLM's "
                        + "byte_count, where mlx5 reads 0 as 2 GiB in data segments and the PRM leaves it unspecified)");
            }
        }
    }

    /**
     * {@code mlx5dv_wr_mr_interleaved(mqp, mkey, access_flags, repeat_count, num_interleaved, data)}: the mkey reads
     * as entry 0's first {@code bytesCount} bytes, entry 1's, ..., then each entry's next stride, {@code repeatCount}
     * times.
     */
    record Interleaved(int repeatCount, List<Entry> entries) implements MkeyLayout {
        public Interleaved {
            entries = copyOf(entries, "mlx5dv_wr_mr_interleaved", "entry");
            if (repeatCount <= 0 || entries.isEmpty()) {
                throw new IllegalArgumentException("mlx5dv_wr_mr_interleaved: repeatCount " + repeatCount + " and "
                        + entries.size() + " entries: both must be positive");
            }
            long perRepeat = 0;
            for (Entry e : entries) {
                perRepeat += e.bytesCount();
            }
            if (perRepeat > 0xFFFF_FFFFL) {
                throw new IllegalArgumentException("mlx5dv_wr_mr_interleaved: the entries' bytes per repetition ("
                        + perRepeat + ") exceed the repeat block's 32-bit byte_count");
            }
        }

        @Override
        public int entryCount() {
            return entries.size();
        }

        @Override
        public long byteLength() {
            long perRepeat = 0;
            for (Entry e : entries) {
                perRepeat += e.bytesCount();
            }
            return perRepeat * Integer.toUnsignedLong(repeatCount);
        }

        @Override
        public List<MemoryRegion> regions() {
            return distinct(entries.stream().map(Entry::region).toList());
        }
    }

    /** {@code mlx5dv_wr_mr_list(mqp, mkey, access_flags, num_sges, sge)}: the mkey reads as the SGEs, in order. */
    record SgeList(List<Sge> sges) implements MkeyLayout {
        public SgeList {
            sges = copyOf(sges, "mlx5dv_wr_mr_list", "sge");
            if (sges.isEmpty()) {
                throw new IllegalArgumentException("mlx5dv_wr_mr_list: at least one SGE");
            }
            long total = 0;
            for (Sge s : sges) {
                total += s.length();
            }
            if (total > Integer.MAX_VALUE) { // libmlx5 sums the lengths in an int (umr_sg_list_create)
                throw new IllegalArgumentException("mlx5dv_wr_mr_list: the SGEs' total length " + total
                        + " exceeds 2^31 - 1, which libmlx5 44 sums in an int");
            }
        }

        @Override
        public int entryCount() {
            return sges.size();
        }

        @Override
        public long byteLength() {
            long total = 0;
            for (Sge s : sges) {
                total += s.length();
            }
            return total;
        }

        @Override
        public List<MemoryRegion> regions() {
            return distinct(sges.stream().map(Sge::region).toList());
        }
    }

    /** An interleaved layout of {@code entries}, repeated {@code repeatCount} times. */
    static Interleaved interleaved(int repeatCount, Entry... entries) {
        return new Interleaved(repeatCount, Arrays.asList(Objects.requireNonNull(entries,
                "mlx5dv_wr_mr_interleaved: entries")));
    }

    /** A list layout of {@code sges}. */
    static SgeList list(Sge... sges) {
        return new SgeList(Arrays.asList(Objects.requireNonNull(sges, "mlx5dv_wr_mr_list: sges")));
    }

    /** {@code List.copyOf(list)}, naming the verb and the index of a null element (checked on the copy). */
    private static <T> List<T> copyOf(List<T> list, String verb, String what) {
        List<T> copy = new ArrayList<>(Objects.requireNonNull(list, verb + ": " + what + " list"));
        int i = copy.indexOf(null);
        if (i >= 0) {
            throw new NullPointerException(verb + ": " + what + " " + i + " is null");
        }
        return List.copyOf(copy);
    }

    private static List<MemoryRegion> distinct(List<MemoryRegion> all) {
        Set<MemoryRegion> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<MemoryRegion> out = new ArrayList<>();
        for (MemoryRegion r : all) {
            if (seen.add(r)) {
                out.add(r);
            }
        }
        return List.copyOf(out);
    }
}
