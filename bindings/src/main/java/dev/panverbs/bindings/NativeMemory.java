package dev.panverbs.bindings;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Reads and writes at absolute native addresses, for the inline twins that follow C pointers
 * ({@code qp->context->ops.post_send}) whose segments arrive with no usable size (a zero-length segment read
 * from a struct field, or jextract's unbounded one). One segment spans the address space, so a read
 * allocates nothing. Callers check pointers for NULL first: a read at a small address crashes the JVM.
 */
public final class NativeMemory {

    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private NativeMemory() {}

    /** The pointer stored at {@code address}, as a zero-length segment. */
    public static MemorySegment pointer(long address) {
        return ALL.get(ValueLayout.ADDRESS, address);
    }

    public static void pointer(long address, MemorySegment value) {
        ALL.set(ValueLayout.ADDRESS, address, value);
    }

    public static long int64(long address) {
        return ALL.get(ValueLayout.JAVA_LONG, address);
    }

    public static int int32(long address) {
        return ALL.get(ValueLayout.JAVA_INT, address);
    }

    public static void int32(long address, int value) {
        ALL.set(ValueLayout.JAVA_INT, address, value);
    }

    /** {@code memset(address, 0, length)}. */
    public static void zero(long address, long length) {
        ALL.asSlice(address, length).fill((byte) 0);
    }

    /**
     * {@code pointer.address()}, or an {@link IllegalArgumentException} naming the verb and argument where C
     * would dereference NULL.
     */
    public static long nonNull(MemorySegment pointer, String verb, String argument) {
        long address = pointer.address();
        if (address == 0L) {
            throw nullArgument(verb, argument);
        }
        return address;
    }

    /**
     * The address of {@code buffer}, an output argument into which the verb writes {@code size} bytes, after
     * checking that it can hold them: non-NULL, native, and at least {@code size} bytes long. The twins pass
     * C's {@code sizeof} to the provider (or zero the struct themselves) whatever the segment's own size, so an
     * undersized allocation would be overrun outside any FFM bounds check. A raw pointer ({@code ofAddress},
     * zero length) must be {@code reinterpret}ed to the struct's size first.
     */
    public static long output(MemorySegment buffer, long size, String verb, String argument) {
        if (!buffer.isNative()) {
            throw new IllegalArgumentException(verb + ": " + argument + " is a heap segment; the verb writes "
                    + size + " bytes at a native address");
        }
        long address = nonNull(buffer, verb, argument);
        if (buffer.byteSize() < size) {
            throw new IllegalArgumentException(verb + ": " + argument + " has " + buffer.byteSize()
                    + " bytes, the verb writes " + size + " (allocate the struct's layout, or reinterpret a raw "
                    + "pointer to that size)");
        }
        return address;
    }

    private static IllegalArgumentException nullArgument(String verb, String argument) {
        return new IllegalArgumentException(verb + ": " + argument + " is NULL");
    }
}
