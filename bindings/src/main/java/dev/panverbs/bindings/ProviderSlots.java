package dev.panverbs.bindings;

import java.util.Objects;
import java.util.function.Function;

/**
 * The one way every twin of these bindings refuses a NULL provider slot (a function pointer that C would call
 * unchecked): {@code throw ProviderSlots.missing(verb, slot, reason)}, on the cold path after a single compare of the
 * slot with 0. The exception is an {@link UnsupportedSlotException}, unless the module that uses the bindings
 * installed a translation with {@link #translateWith}: core installs one that returns its public
 * {@code UnsupportedVerbException}, so that a missing slot reaches users as the same type as an EOPNOTSUPP from a verb,
 * without a catch around every data-path call.
 *
 * <p>The translation is a process-wide setting, like the JDK's {@code SharedSecrets}: installed once, by core's
 * {@code VerbsObject} class initialisation, which runs before any core object can reach a slot. Java-only: C has no
 * such check.
 */
public final class ProviderSlots {

    private static volatile Function<UnsupportedSlotException, ? extends RuntimeException> translation;

    private ProviderSlots() {}

    /**
     * The exception for a NULL slot: {@code translation(new UnsupportedSlotException(...))}, or the
     * {@link UnsupportedSlotException} itself when no translation is installed. Never returns null.
     *
     * @param verb   the C verb that calls through the slot, e.g. {@code ibv_wr_send}
     * @param slot   the slot as {@code struct.field}, e.g. {@code ibv_qp_ex.wr_send}
     * @param reason why the provider left it NULL
     */
    public static RuntimeException missing(String verb, String slot, String reason) {
        UnsupportedSlotException e = new UnsupportedSlotException(verb, slot, reason);
        Function<UnsupportedSlotException, ? extends RuntimeException> t = translation;
        return t == null ? e : Objects.requireNonNull(t.apply(e), "slot translation returned null");
    }

    /**
     * Installs the translation of {@link UnsupportedSlotException} into the using module's own exception; once.
     *
     * @throws IllegalStateException if one is installed already
     */
    public static synchronized void translateWith(Function<UnsupportedSlotException, ? extends RuntimeException> t) {
        Objects.requireNonNull(t, "translation");
        if (translation != null) {
            throw new IllegalStateException("ProviderSlots.translateWith called twice");
        }
        translation = t;
    }
}
