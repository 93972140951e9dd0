package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.ibverbs.FakeVerbs.args;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.verbs.ibv_context_ops;
import dev.panverbs.bindings.verbs.ibv_device_attr;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.ibv_gid_entry;
import dev.panverbs.bindings.verbs.ibv_port_attr;
import dev.panverbs.bindings.verbs.ibv_wc;
import dev.panverbs.bindings.verbs.verbs_context;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * The twins that write a fixed-size struct (or an array of them) pass C's {@code sizeof} to the provider, or zero
 * the struct themselves, whatever the Java segment's size: an undersized segment would be overrun outside any FFM
 * bounds check (native heap corruption, the kind that surfaces later as a JVM crash elsewhere). They refuse one
 * before any native code runs. See core/NATIVE-BUFFERS.md for the audit of every buffer handed to a verb.
 */
class OutputBufferSizeTest {

    /** What the provider is told to write, from gcc on Debian 12 x86_64 (inline catalogue, section 2.2). */
    @Test
    void theSizesTheVerbsWriteAreGccs() {
        assertThat(ibv_port_attr.sizeof()).isEqualTo(52);
        assertThat(ibv_device_attr_ex.sizeof()).isEqualTo(400);
        assertThat(ibv_device_attr.sizeof()).isEqualTo(232);
        assertThat(ibv_gid_entry.sizeof()).isEqualTo(32);
        assertThat(ibv_wc.sizeof()).isEqualTo(48);
    }

    @Test
    void queryPortRefusesTheCompat48ByteStruct() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.query_port$offset(), "query_port",
                    verbs_context.query_port.descriptor(), 0);
            MemorySegment compat = f.arena.allocate(48, 4);
            assertThatThrownBy(() -> VerbsContextInline.ibv_query_port(f.ctx, (byte) 1, compat))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("ibv_query_port: port_attr has 48 bytes, the verb writes 52 (allocate the struct's "
                            + "layout, or reinterpret a raw pointer to that size)");
            assertThat(f.calls).isEmpty();

            MemorySegment attr = f.arena.allocate(ibv_port_attr.layout());
            assertThat(VerbsContextInline.ibv_query_port(f.ctx, (byte) 1, attr)).isZero();
            assertThat(f.onlyCall().args()).isEqualTo(args(f.ctx, (byte) 1, attr, 52L));
        }
    }

    @Test
    void queryDeviceExRefusesTheLegacyStruct() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.query_device_ex$offset(), "query_device_ex",
                    verbs_context.query_device_ex.descriptor(), 0);
            MemorySegment legacy = f.arena.allocate(ibv_device_attr.layout());
            assertThatThrownBy(() -> VerbsContextInline.ibv_query_device_ex(f.ctx, MemorySegment.NULL, legacy))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("ibv_query_device_ex: attr has 232 bytes, the verb writes 400");
            MemorySegment raw = MemorySegment.ofAddress(legacy.address());
            assertThatThrownBy(() -> VerbsContextInline.ibv_query_device_ex(f.ctx, MemorySegment.NULL, raw))
                    .hasMessageStartingWith("ibv_query_device_ex: attr has 0 bytes");
            MemorySegment heap = MemorySegment.ofArray(new byte[400]);
            assertThatThrownBy(() -> VerbsContextInline.ibv_query_device_ex(f.ctx, MemorySegment.NULL, heap))
                    .hasMessageStartingWith("ibv_query_device_ex: attr is a heap segment");
            assertThat(f.calls).isEmpty();

            MemorySegment attr = f.arena.allocate(ibv_device_attr_ex.layout());
            assertThat(VerbsContextInline.ibv_query_device_ex(f.ctx, MemorySegment.NULL, attr)).isZero();
            assertThat(f.onlyCall().args()).isEqualTo(args(f.ctx, MemorySegment.NULL, attr, 400L));
        }
    }

    @Test
    void gidQueriesRefuseEntriesTooSmallForWhatTheyAskFor() {
        try (FakeVerbs f = new FakeVerbs()) {
            MemorySegment gidOnly = f.arena.allocate(16, 8);
            assertThatThrownBy(() -> VerbsInline.ibv_query_gid_ex(f.ctx, 1, 0, gidOnly, 0))
                    .hasMessageStartingWith("ibv_query_gid_ex: entry has 16 bytes, the verb writes 32");
            MemorySegment three = f.arena.allocate(ibv_gid_entry.layout(), 3);
            assertThatThrownBy(() -> VerbsInline.ibv_query_gid_table(f.ctx, three, 4L, 0))
                    .hasMessageStartingWith("ibv_query_gid_table: entries has 96 bytes, the verb writes 128");
            assertThatThrownBy(() -> VerbsInline.ibv_query_gid_table(f.ctx, three, -1L, 0))
                    .hasMessage("ibv_query_gid_table: max_entries -1 is out of range");
            assertThatThrownBy(() -> VerbsInline.ibv_query_gid_table(f.ctx, three, Long.MAX_VALUE / 16, 0))
                    .hasMessageContaining("is out of range");
            assertThat(f.calls).isEmpty();
        }
    }

    @Test
    void pollCqRefusesAnArrayShorterThanNumEntries() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.installOp(VerbsInline.OPS_POLL_CQ, "poll_cq", ibv_context_ops.poll_cq.descriptor(), 0);
            MemorySegment two = f.arena.allocate(ibv_wc.layout(), 2);
            assertThatThrownBy(() -> VerbsInline.ibv_poll_cq(f.cq, 3, two))
                    .hasMessageStartingWith("ibv_poll_cq: wc has 96 bytes, the verb writes 144");
            assertThat(f.calls).isEmpty();
            assertThat(VerbsInline.ibv_poll_cq(f.cq, 2, two)).isZero();
            assertThat(f.onlyCall().args()).isEqualTo(args(f.cq, 2, two));
        }
    }
}
