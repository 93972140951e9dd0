package dev.panverbs.core;

import dev.panverbs.testing.RdmaTestDevice;

/**
 * The fixture of the core ITs (pyverbs' {@code BaseResources}): the test device's context and one PD. One
 * {@link #close()} in {@code @AfterEach} closes everything a test created, by the cascade.
 */
final class CoreResources implements AutoCloseable {
    final String deviceName;
    final Context context;
    final ProtectionDomain pd;

    CoreResources() {
        this.deviceName = RdmaTestDevice.name();
        this.context = Device.open(deviceName);
        this.pd = context.allocPd();
    }

    @Override
    public void close() {
        context.close();
    }
}
