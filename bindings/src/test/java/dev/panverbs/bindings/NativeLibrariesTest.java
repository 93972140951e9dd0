package dev.panverbs.bindings;

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
}
