package dev.panverbs.bindings.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.NativeLibraries;
import dev.panverbs.bindings.abi.CToolchain;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import org.junit.jupiter.api.Test;

/**
 * Every libmlx5 function the bindings call resolves in the installed {@code libmlx5.so.1}, through the same
 * lookup the bindings use, and the hand-written descriptors of {@link Mlx5dvInline} are the header's.
 * A missing library or symbol is a failure naming it (ibverbs-providers is installed on every build host).
 * That every function jextract bound resolves is {@code abi.GeneratedSymbolsTest}.
 */
class Mlx5dvSymbolsTest {

    @Test
    void functionsBehindTheInlineTwinsResolveInLibmlx5() {
        assertThat(NativeLibraries.mlx5Available()).as(NativeLibraries.MLX5_SONAME + " (install ibverbs-providers)").isTrue();
        assertThat(Mlx5dvInline.Exported.QUERY_PORT).as("_mlx5dv_query_port linked").isNotNull();
        assertThat(Mlx5dvInline.Exported.MKEY_CHECK).as("_mlx5dv_mkey_check linked").isNotNull();
        // what a caller of Mlx5dvInlineWr needs to get the struct mlx5dv_qp_ex of a QP
        assertThat(NativeLibraries.mlx5Symbol("mlx5dv_qp_ex_from_ibv_qp_ex").address()).isNotZero();
    }

    @Test
    void handWrittenDescriptorsAreJextractsAndMatchTheCPrototypes() {
        assertThat(Mlx5dvInline.Exported.QUERY_PORT_DESC).isEqualTo(mlx5dv_h._mlx5dv_query_port$descriptor());
        assertThat(Mlx5dvInline.Exported.MKEY_CHECK_DESC).isEqualTo(mlx5dv_h._mlx5dv_mkey_check$descriptor());
        // and the prototypes those descriptors encode are the header's (compile-time check by gcc)
        CToolchain.get().compileExecutable("mlx5dv-prototypes", """
                #include <stddef.h>
                #include <stdint.h>
                #include <infiniband/mlx5dv.h>
                _Static_assert(__builtin_types_compatible_p(__typeof__(_mlx5dv_query_port),
                    int (struct ibv_context *, uint32_t, struct mlx5dv_port *, size_t)), "_mlx5dv_query_port");
                _Static_assert(__builtin_types_compatible_p(__typeof__(_mlx5dv_mkey_check),
                    int (struct mlx5dv_mkey *, struct mlx5dv_mkey_err *, size_t)), "_mlx5dv_mkey_check");
                _Static_assert(sizeof(uint32_t) == 4 && sizeof(size_t) == 8 && sizeof(int) == 4, "LP64");
                int main(void) { return 0; }
                """);
        assertThat(mlx5dv_h.C_INT.byteSize()).isEqualTo(4);
        assertThat(mlx5dv_h.C_LONG.byteSize()).isEqualTo(8);
    }
}
