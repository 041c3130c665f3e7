package io.auditpipe.flink.state;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import org.junit.jupiter.api.Test;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;

/** {@link RocksDbFiles}: the options it changes. */
class RocksDbFilesTest {
    @Test
    void startsANewManifestPast64KiB() {
        RocksDB.loadLibrary();
        try (DBOptions options = new DBOptions()) {
            assertEquals(
                    1024L * 1024 * 1024, options.maxManifestFileSize(), "RocksDB's default: 1 GiB");
            DBOptions set = new RocksDbFiles().createDBOptions(options, new ArrayList<>());
            assertEquals(64 * 1024, set.maxManifestFileSize());
        }
    }
}
