package dev.panverbs.bindings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Soname loading and its failure, without a device. */
class NativeLibrariesTest {

    @Test
    void missingLibraryIsNativeLibraryExceptionNamingThePackageOnEveryUse() {
        NativeLibraries.Loaded missing =
                NativeLibraries.Loaded.load("libpanverbs-absent.so.1", "install it: apt-get install libibverbs1");
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(missing::orThrow)
                    .isInstanceOf(NativeLibraryException.class)
                    .hasMessageContaining("libpanverbs-absent.so.1")
                    .hasMessageContaining("apt-get install libibverbs1");
        }
    }

    @Test
    void aSystemPropertyReplacesTheSonameAndAnEmptyOneDoesNot() {
        String property = "dev.panverbs.bindings.test." + System.nanoTime();
        try {
            System.setProperty(property, " libpanverbs-absent.so.1 ");
            NativeLibraries.Loaded replaced = NativeLibraries.Loaded.load(property, NativeLibraries.IBVERBS_SONAME, "h");
            assertThat(replaced.library()).isEqualTo("libpanverbs-absent.so.1");
            assertThatThrownBy(replaced::orThrow).isInstanceOf(NativeLibraryException.class)
                    .satisfies(e -> assertThat(((NativeLibraryException) e).problem())
                            .startsWith("libpanverbs-absent.so.1 cannot be loaded ("))
                    .satisfies(e -> assertThat(((NativeLibraryException) e).hint()).isEqualTo("h"));
            System.setProperty(property, "");
            NativeLibraries.Loaded standard = NativeLibraries.Loaded.load(property, NativeLibraries.IBVERBS_SONAME, "h");
            assertThat(standard.library()).isEqualTo(NativeLibraries.IBVERBS_SONAME);
            assertThat(standard.orThrow().find("ibv_get_device_list")).isPresent();
        } finally {
            System.clearProperty(property);
        }
    }

    @Test
    void missingSymbolNamesItAndTheUpgrade() {
        assertThatThrownBy(() -> NativeLibraries.ibverbsSymbol("ibv_panverbs_no_such_verb"))
                .isInstanceOf(NativeLibraryException.class)
                .hasMessage("libibverbs.so.1 has no symbol ibv_panverbs_no_such_verb; rdma-core is older than 44; "
                        + "upgrade libibverbs1")
                .satisfies(e -> assertThat(((NativeLibraryException) e).library()).isEqualTo("libibverbs.so.1"));
    }
}
