package io.auditpipe.flink.baselines;

import java.io.Serializable;

/**
 * Where a principal's stored baseline is looked up when {@link PrincipalBaselines} has no state of
 * it: the store's baselines collection (io.auditpipe.flink.sink.StoreProfileSeeds), which imported
 * history fills.
 */
public interface ProfileSeeds extends Serializable {
    void open() throws Exception;

    /** The principal's stored baseline, or null. */
    Profile find(String server, String user) throws Exception;

    void close();
}
