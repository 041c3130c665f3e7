package io.auditpipe.flink.state;

import java.util.Collection;
import org.apache.flink.state.rocksdb.RocksDBOptionsFactory;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;

/**
 * RocksDB options Flink's configuration has no key for ({@code
 * state.backend.rocksdb.options-factory}, stack/flink/job_settings.py): applied after the
 * configured ones.
 *
 * <p><b>A bounded MANIFEST.</b> RocksDB records every flush and compaction in its MANIFEST file and
 * starts a new one only past {@code max_manifest_file_size}, 1 GiB by default. An incremental
 * checkpoint shares the state's SST files between checkpoints but uploads the MANIFEST (with the
 * OPTIONS and CURRENT files) whole every time, so with a flush of every column family at each
 * checkpoint the MANIFEST grows by a few hundred bytes per checkpoint for ever, and every
 * checkpoint writes it again: in the bench's long run, each of the job's RocksDB instances grew by
 * about 4.6 KiB a minute, what the checkpoints held and wrote with it (bench/README.md "The long
 * run"). Past {@link #MAX_MANIFEST_BYTES} RocksDB writes a new MANIFEST that starts with the files
 * live then (a few KiB for the job's column families) and deletes the old one.
 */
public final class RocksDbFiles implements RocksDBOptionsFactory {
    private static final long serialVersionUID = 1L;

    /** Where RocksDB starts a new MANIFEST. */
    public static final long MAX_MANIFEST_BYTES = 64 * 1024;

    @Override
    public DBOptions createDBOptions(
            DBOptions currentOptions, Collection<AutoCloseable> handlesToClose) {
        return currentOptions.setMaxManifestFileSize(MAX_MANIFEST_BYTES);
    }

    @Override
    public ColumnFamilyOptions createColumnOptions(
            ColumnFamilyOptions currentOptions, Collection<AutoCloseable> handlesToClose) {
        return currentOptions;
    }
}
