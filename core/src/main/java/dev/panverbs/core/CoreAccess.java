package dev.panverbs.core;

import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.core.internal.Resource;

/** Implements {@link NativeHandles.Access}: the only bridge from the internal package into this one. */
final class CoreAccess implements NativeHandles.Access {

    static {
        NativeHandles.install(new CoreAccess());
    }

    private CoreAccess() {}

    @Override
    public Resource resourceOf(Object verbsObject) {
        if (verbsObject instanceof VerbsObject v) {
            return v.resource;
        }
        throw new IllegalArgumentException("not a verbs object of dev.panverbs.core: "
                + (verbsObject == null ? "null" : verbsObject.getClass().getName()));
    }
}
