package dev.panverbs.bindings.abi;

import dev.panverbs.bindings.abi.AbiModel.Constant;
import dev.panverbs.bindings.abi.AbiModel.Field;
import dev.panverbs.bindings.abi.AbiModel.Type;
import dev.panverbs.bindings.abi.AbiProgram.CResult;
import java.util.ArrayList;
import java.util.List;

/**
 * Compares the Java side of the ABI ({@link AbiModel}) with what gcc printed ({@link CResult}) and lists
 * every difference in model order, so the first entry names the first differing type, field or constant.
 */
public final class AbiComparator {

    private AbiComparator() {}

    /** All mismatches, each naming the C type and member (or header and constant), Java value then C value. */
    public static List<String> compare(AbiModel model, CResult c) {
        List<String> out = new ArrayList<>();
        List<Type> types = model.types();
        for (int i = 0; i < types.size(); i++) {
            Type t = types.get(i);
            long[] v = c.types()[i];
            if (v == null) {
                out.add(t.cType() + ": gcc printed nothing");
                continue;
            }
            check(out, t.cType(), "sizeof", t.size(), v[0]);
            check(out, t.cType(), "alignof", t.align(), v[1]);
        }
        int id = 0;
        for (Type t : types) {
            for (Field f : t.fields()) {
                long[] v = c.fields()[id++];
                if (v == null) {
                    out.add(f.describe() + ": gcc printed nothing");
                    continue;
                }
                check(out, f.describe(), "offset", f.offset(), v[0]);
                if (f.flexible()) {
                    check(out, f.describe(), "sizeof (flexible array)", f.size(), 0);
                } else {
                    check(out, f.describe(), "sizeof", f.size(), v[1]);
                }
                if (!alignmentAgrees(f.align(), v[2], t.align(), f.offset())) {
                    out.add(f.describe() + ": alignof Java " + f.align() + ", C " + v[2]);
                }
            }
        }
        List<Constant> constants = model.constants();
        for (int i = 0; i < constants.size(); i++) {
            Constant k = constants.get(i);
            long[] v = c.constants()[i];
            if (v == null) {
                out.add(k.describe() + ": gcc printed nothing");
                continue;
            }
            String problem = constantProblem(k, v[0], v[1] != 0);
            if (problem != null) {
                out.add(problem);
            }
        }
        return out;
    }

    /**
     * Member alignments agree when equal, or when Java asks for more than C declares but C guarantees it
     * anyway: a member of a packed struct has alignment 1 in C, yet {@code mlx5_wqe_ctrl_seg} is also
     * {@code aligned(4)}, so its 32-bit members at offsets 0, 4 and 12 always sit on 4-byte boundaries,
     * which is what jextract's {@code C_INT} members require. Java asking for less than C declares, or for
     * more than the placement guarantees, is a mismatch.
     */
    static boolean alignmentAgrees(long java, long c, long typeAlign, long offset) {
        if (java == c) {
            return true;
        }
        long guaranteed = offset == 0 ? typeAlign : Math.min(typeAlign, Long.lowestOneBit(offset));
        return java > c && java <= guaranteed;
    }

    private static void check(List<String> out, String what, String property, long java, long c) {
        if (java != c) {
            out.add(what + ": " + property + " Java " + java + ", C " + c);
        }
    }

    /**
     * An {@code int} accessor must hold the C value exactly when it fits 32 bits signed, or its bit pattern
     * when C has an unsigned value up to 2^32-1 (e.g. {@code MLX5_INLINE_SEG} 0x80000000, C type
     * {@code unsigned int}); a wider C value in an {@code int} is a truncation and a mismatch.
     */
    static String constantProblem(Constant k, long cValue, boolean cNegative) {
        String cText = cNegative ? Long.toString(cValue) : Long.toUnsignedString(cValue);
        return switch (k.kind()) {
            case INT -> {
                boolean fits = cNegative ? cValue >= Integer.MIN_VALUE : Long.compareUnsigned(cValue, 0xFFFF_FFFFL) <= 0;
                if (!fits) {
                    yield k.describe() + ": Java int " + (int) k.value() + " cannot hold C value " + cText;
                }
                yield (int) cValue == (int) k.value() ? null
                        : k.describe() + ": Java " + (int) k.value() + ", C " + cText;
            }
            case LONG -> cValue == k.value() ? null : k.describe() + ": Java " + k.value() + ", C " + cText;
            case POINTER -> cValue == k.value() ? null
                    : k.describe() + ": Java address 0x" + Long.toHexString(k.value()) + ", C 0x" + Long.toHexString(cValue);
        };
    }
}
