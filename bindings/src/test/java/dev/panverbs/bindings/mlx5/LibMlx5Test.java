package dev.panverbs.bindings.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraries;
import dev.panverbs.bindings.mlx5dv.mlx5dv_context;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import dev.panverbs.bindings.mlx5dv.mlx5dv_mkey_init_attr;
import dev.panverbs.bindings.mlx5dv.mlx5dv_obj;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_device;
import dev.panverbs.bindings.verbs.ibv_pd;
import dev.panverbs.bindings.verbs.ibv_qp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Links every {@link LibMlx5} handle against the installed {@code libmlx5.so.1} (ibverbs-providers is installed on
 * every build host; its absence is a failure naming it), and calls the functions that refuse a non-mlx5 object
 * before touching it: a fake {@code struct verbs_device} whose provider ops are not libmlx5's, and a context, PD
 * and QP on it. That proves the descriptors, the argument order and the errno capture against the real library
 * without a device. That every function jextract bound resolves is {@code abi.GeneratedSymbolsTest}.
 */
class LibMlx5Test {

    private Arena arena;
    private MemorySegment errno;
    /** {@code struct verbs_device}: an {@code ibv_device} followed by {@code ops}, NULL here (no provider's). */
    private MemorySegment device;
    private MemorySegment context;

    @BeforeEach
    void fakeNonMlx5Objects() {
        arena = Arena.ofAuto();
        errno = Errno.allocateCapture(arena);
        device = arena.allocate(ibv_device.sizeof() + 64, 8);
        context = arena.allocate(ibv_context.sizeof(), 8);
        ibv_context.device(context, device);
    }

    @Test
    void everyFunctionLinks() throws IllegalAccessException {
        assertThat(NativeLibraries.mlx5Available()).as(NativeLibraries.MLX5_SONAME + " (install ibverbs-providers)")
                .isTrue();
        List<String> unlinked = new ArrayList<>();
        int handles = 0;
        for (Field f : Mlx5Handles.class.getDeclaredFields()) {
            if (f.getType() == MethodHandle.class && Modifier.isStatic(f.getModifiers())) {
                handles++;
                if (f.get(null) == null) {
                    unlinked.add(f.getName());
                }
            }
        }
        assertThat(unlinked).isEmpty();
        assertThat(handles).isEqualTo(21);
    }

    @Test
    void errnoCapturingHandlesTakeTheCaptureSegmentFirst() {
        assertThat(Mlx5Handles.mlx5dv_create_qp.type().parameterCount()).isEqualTo(4);
        assertThat(Mlx5Handles.mlx5dv_create_cq.type().parameterCount()).isEqualTo(4);
        assertThat(Mlx5Handles.mlx5dv_create_mkey.type().parameterCount()).isEqualTo(2);
        assertThat(Mlx5Handles.mlx5dv_query_device.type().parameterCount()).isEqualTo(2);
        assertThat(Mlx5Handles._mlx5dv_query_port.type().parameterCount()).isEqualTo(4);
    }

    @Test
    void isSupportedIsFalseForAnotherProvidersDevice() {
        assertThat(LibMlx5.mlx5dv_is_supported(device)).isFalse();
    }

    @Test
    void openDeviceOfAnotherProviderFailsWithEopnotsuppInErrno() {
        assertThat(LibMlx5.mlx5dv_open_device(clear(errno), device, MemorySegment.NULL)).isEqualTo(MemorySegment.NULL);
        assertThat(Errno.get(errno)).isEqualTo(Errno.EOPNOTSUPP);
    }

    @Test
    void createQpCqMkeyOnAnotherProvidersContextFailWithEopnotsuppInErrno() {
        assertThat(LibMlx5.mlx5dv_create_qp(clear(errno), context, MemorySegment.NULL, MemorySegment.NULL))
                .isEqualTo(MemorySegment.NULL);
        assertThat(Errno.get(errno)).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(LibMlx5.mlx5dv_create_cq(clear(errno), context, MemorySegment.NULL, MemorySegment.NULL))
                .isEqualTo(MemorySegment.NULL);
        assertThat(Errno.get(errno)).isEqualTo(Errno.EOPNOTSUPP);
        MemorySegment pd = arena.allocate(ibv_pd.sizeof(), 8);
        ibv_pd.context(pd, context);
        MemorySegment mkeyAttr = arena.allocate(mlx5dv_mkey_init_attr.sizeof(), 8);
        mlx5dv_mkey_init_attr.pd(mkeyAttr, pd);
        assertThat(LibMlx5.mlx5dv_create_mkey(clear(errno), mkeyAttr)).isEqualTo(MemorySegment.NULL);
        assertThat(Errno.get(errno)).isEqualTo(Errno.EOPNOTSUPP);
    }

    @Test
    void errnoValueFunctionsReturnTheirErrno() {
        MemorySegment attrs = arena.allocate(mlx5dv_context.sizeof(), 8);
        assertThat(LibMlx5.mlx5dv_query_device(context, attrs)).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(LibMlx5.mlx5dv_get_clock_info(context, arena.allocate(64, 8))).isEqualTo(Errno.EOPNOTSUPP);
        MemorySegment qp = arena.allocate(ibv_qp.sizeof(), 8);
        ibv_qp.context(qp, context);
        MemorySegment obj = arena.allocate(mlx5dv_obj.sizeof(), 8);
        mlx5dv_obj.qp.in(mlx5dv_obj.qp(obj), qp);
        assertThat(LibMlx5.mlx5dv_init_obj(obj, mlx5dv_h.MLX5DV_OBJ_QP())).isEqualTo(Errno.EOPNOTSUPP);
        // no object named: nothing to find a context from
        assertThat(LibMlx5.mlx5dv_init_obj(obj, 0L)).isEqualTo(Errno.EINVAL);
    }

    /** A capture segment with errno 0, so that a value read after the call was stored by it. */
    private static MemorySegment clear(MemorySegment capture) {
        return capture.fill((byte) 0);
    }
}
