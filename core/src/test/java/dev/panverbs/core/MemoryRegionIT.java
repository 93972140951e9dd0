package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.internal.NativeHandles;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Memory registration on the test device: every kind of segment, iovas, rereg, ownership, DMA-BUF, limits. */
class MemoryRegionIT {

    private static final Set<Access> RW = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    private CoreResources res;

    @BeforeEach
    void open() {
        res = new CoreResources();
    }

    @AfterEach
    void close() {
        res.close();
    }

    @Test
    void regMrOverNativeArenaSegment() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(64 * 1024, 4096);
            MemoryRegion mr = res.pd.regMr(seg, RW);
            assertThat(mr.address()).isEqualTo(seg.address());
            assertThat(mr.length()).isEqualTo(64 * 1024);
            assertThat(mr.lkey()).isNotZero();
            assertThat(mr.access()).isEqualTo(RW);
            assertThat(mr.buffer()).isSameAs(seg);
            assertThat(mr.protectionDomain()).isSameAs(res.pd);
            assertThat(NativeHandles.mr(mr, "test").address()).isNotZero();
            mr.close();
            assertThat(mr.isClosed()).isTrue();
        }
    }

    @Test
    void regMrOverMappedFile(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("mr.bin");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE); Arena arena = Arena.ofShared()) {
            ch.truncate(1 << 20);
            MemorySegment mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, 1 << 20, arena);
            MemoryRegion mr = res.pd.regMrBuilder(mapped, RW).deregisterWith(arena).register();
            assertThat(mr.length()).isEqualTo(1 << 20);
            mapped.set(ValueLayout.JAVA_LONG, 0, 42L);
            mr.close();
        }
    }

    @Test
    void regMrOverDirectByteBuffer() {
        ByteBuffer direct = ByteBuffer.allocateDirect(8192);
        MemoryRegion mr = res.pd.regMr(MemorySegment.ofBuffer(direct), EnumSet.of(Access.LOCAL_WRITE));
        assertThat(mr.length()).isEqualTo(8192);
        assertThat(mr.address()).isEqualTo(MemorySegment.ofBuffer(direct).address());
    }

    @Test
    void regMrZeroBasedAndIova() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(16 * 1024, 4096);
            MemoryRegion zero = res.pd.regMrBuilder(seg, RW).zeroBased().register();
            assertThat(zero.address()).isZero();
            long iova = 0x1000_0000L + (seg.address() & 0xfff);
            MemoryRegion atIova = res.pd.regMrBuilder(seg, RW).iova(iova).register();
            assertThat(atIova.address()).isEqualTo(iova);
            assertThat(atIova.rkey()).isNotEqualTo(zero.rkey());
        }
    }

    /** Runs a rereg; skips (naming the capability) only when the provider reports it unsupported. */
    private void rereg(MemoryRegion mr, MemoryRegion.Rereg rereg) {
        try {
            rereg.apply();
        } catch (UnsupportedVerbException e) {
            assertThat(mr.isClosed()).as("an unsupported rereg leaves the MR usable").isFalse();
            assertThat(e.getMessage()).contains("the MR is unchanged");
            org.junit.jupiter.api.Assumptions.abort("device " + res.deviceName + " lacks " + e.capability() + ": "
                    + e.getMessage());
        }
    }

    @Test
    void reregMrAccess() {
        MemoryRegion mr = res.pd.allocate(8192, EnumSet.of(Access.LOCAL_WRITE));
        rereg(mr, mr.rereg().access(RW));
        assertThat(mr.access()).isEqualTo(RW);
        assertThat(mr.isClosed()).isFalse();
    }

    @Test
    void reregMrTranslation() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(8192, 4096);
            MemorySegment b = arena.allocate(16384, 4096);
            MemoryRegion mr = res.pd.regMr(a, RW);
            rereg(mr, mr.rereg().translation(b));
            assertThat(mr.buffer()).isSameAs(b);
            assertThat(mr.length()).isEqualTo(16384);
            assertThat(mr.address()).isEqualTo(b.address());
        }
    }

    /**
     * {@code translation(arena, segment)} moves the arena tie: after a successful change the old arena's close leaves
     * the MR registered and the new one's deregisters it; after a refused one (rxe: EOPNOTSUPP) it is the other way.
     */
    @Test
    void reregTranslationMovesTheArenaTieOnlyWhenTheChangeSucceeds() {
        Arena oldArena = Arena.ofShared();
        Arena newArena = Arena.ofShared();
        MemoryRegion mr = res.pd.regMr(oldArena, oldArena.allocate(8192, 4096), RW);
        MemorySegment b = newArena.allocate(8192, 4096);
        boolean moved;
        try {
            mr.rereg().translation(newArena, b).apply();
            moved = true;
        } catch (UnsupportedVerbException e) {
            moved = false;
        }
        (moved ? oldArena : newArena).close();
        assertThat(mr.isOpen()).as("the arena that does not hold the MR's memory leaves it registered").isTrue();
        (moved ? newArena : oldArena).close();
        assertThat(mr.isOpen()).as("the arena of its memory deregisters it").isFalse();
    }

    @Test
    void reregMrPdMovesTheMrInTheRegistry() {
        MemoryRegion mr = res.pd.allocate(8192, RW);
        ProtectionDomain pd2 = res.context.allocPd();
        rereg(mr, mr.rereg().pd(pd2));
        assertThat(mr.protectionDomain()).isSameAs(pd2);
        res.pd.close();
        assertThat(mr.isClosed()).as("the MR moved to pd2, closing pd1 leaves it").isFalse();
        pd2.close();
        assertThat(mr.isClosed()).isTrue();
    }

    @Test
    void reregMrWithNothingToChangeIsRefused() {
        MemoryRegion mr = res.pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        assertThatThrownBy(() -> mr.rereg().apply()).hasMessageContaining("nothing to change");
    }

    @Test
    void allocateOwnsItsMemory() {
        MemoryRegion mr = res.pd.allocate(10_000, RW);
        assertThat(mr.length()).isEqualTo(10_000);
        assertThat(mr.address() % 4096).isZero();
        mr.buffer().set(ValueLayout.JAVA_INT, 0, 7);
        mr.close();
        assertThatThrownBy(() -> mr.buffer().get(ValueLayout.JAVA_INT, 0))
                .as("the owned arena is closed after deregistration").isInstanceOf(IllegalStateException.class);
    }

    @Test
    void allocateMemoryIsFreedByCascadeToo() {
        MemoryRegion mr = res.pd.allocate(4096, RW);
        res.context.close();
        assertThat(mr.isClosed()).isTrue();
        assertThatThrownBy(mr::buffer).isInstanceOf(IllegalStateException.class).hasMessageStartingWith("MemoryRegion[")
                .hasMessageContaining("cannot call buffer()");
    }

    @Test
    void arenaCloseDeregistersFirst() {
        Arena arena = Arena.ofConfined();
        MemorySegment seg = arena.allocate(8192, 4096);
        List<String> order = new ArrayList<>();
        MemoryRegion[] holder = new MemoryRegion[1];
        // registered on the arena BEFORE the MR tie, so it runs AFTER it (reverse order), like the arena's own
        // free of seg, which was registered even earlier, at allocate()
        MemorySegment.ofAddress(seg.address()).reinterpret(arena,
                s -> order.add("later-registered-before-tie: mr closed=" + holder[0].isClosed()));
        holder[0] = res.pd.regMrBuilder(seg, RW).deregisterWith(arena).register();
        assertThat(holder[0].isClosed()).isFalse();
        arena.close();
        assertThat(holder[0].isClosed()).isTrue();
        assertThat(order).containsExactly("later-registered-before-tie: mr closed=true");
        holder[0].close(); // idempotent after the arena closed it
    }

    @Test
    void deregisterWithForeignArenaIsRefused() {
        try (Arena a = Arena.ofConfined(); Arena b = Arena.ofConfined()) {
            MemorySegment seg = a.allocate(4096);
            assertThatThrownBy(() -> res.pd.regMrBuilder(seg, RW).deregisterWith(b))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not allocated by this arena");
        }
    }

    @Test
    void regMrBadFlagsNeverReachTheKernel() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(4096);
            assertThatThrownBy(() -> res.pd.regMr(seg, EnumSet.of(Access.REMOTE_WRITE)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("requires LOCAL_WRITE").hasMessageContaining("EINVAL");
            assertThatThrownBy(() -> res.pd.regMr(MemorySegment.ofArray(new byte[64]), EnumSet.noneOf(Access.class)))
                    .hasMessageContaining("heap segment");
        }
    }

    @Test
    void regDmabufMrIsRefusedUpFrontOrReachesTheKernel() {
        try {
            res.pd.regDmabufMr(0, 4096, 0, -1, EnumSet.of(Access.LOCAL_WRITE));
            throw new AssertionError("fd -1 cannot be registered");
        } catch (UnsupportedVerbException e) {
            assertThat(e.capability()).isEqualTo("DMA-BUF memory registration");
            assertThat(e.errno()).as("refused before the call").isZero();
            assertThat(e.getMessage()).contains("ibv_reg_dmabuf_mr(").contains("does not implement it");
        } catch (VerbsException e) {
            assertThat(res.deviceName).as("rxe has no DMA-BUF support: it must be refused up front").doesNotStartWith("rxe");
            assertThat(e.errnoName()).isEqualTo("EBADF");
        }
    }

    @Test
    void regMrAboveMemlockLimitNamesTheLimit() throws Throwable {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment seg = arena.allocate(1 << 20, 4096);
            // capset gives the calling thread a new credential, and the kernel's uverbs write() then refuses (EACCES)
            // every verbs fd opened under the old one (librdmacm's process-wide device contexts, opened by earlier
            // tests, among them): so the limited section runs on a thread of its own, which ends with it
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread limited = new Thread(() -> {
                try (MemlockLimiter limiter = new MemlockLimiter(64 * 1024)) {
                    assertThatThrownBy(() -> res.pd.regMr(seg, RW))
                            .isInstanceOf(VerbsException.class)
                            .satisfies(e -> assertThat(((VerbsException) e).errnoName()).isIn("ENOMEM", "EPERM"))
                            .hasMessageContaining("RLIMIT_MEMLOCK is 64 KiB")
                            .hasMessageContaining("ulimit -l");
                } catch (Throwable t) {
                    failure.set(t);
                }
            }, "memlock-limited");
            limited.start();
            limited.join();
            if (failure.get() != null) {
                throw failure.get();
            }
            res.pd.regMr(seg, RW).close(); // the limit is restored
        }
    }
}
