package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.flink.history.FileRecords;
import io.auditpipe.flink.history.HistoryFormat;
import io.auditpipe.flink.records.ParsedRecord;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The import's reader hands its records over in bounded batches, each record with the count
 * handed over up to it, and a reader restored from that count goes on with the next record.
 */
class HistoryFormatTest {
    private static final int RECORDS = 2_500;

    @TempDir
    Path dir;

    @Test
    void batchesAreBoundedAndCarryTheCountHandedOver() throws IOException {
        HistoryFormat format = format(write());
        BulkFormat.Reader<ParsedRecord> reader = format.createReader(new Configuration(), manifest());
        List<Integer> sizes = new ArrayList<>();
        long expectedSkip = 0;
        BulkFormat.RecordIterator<ParsedRecord> batch;
        while ((batch = reader.readBatch()) != null) {
            int size = 0;
            RecordAndPosition<ParsedRecord> r;
            while ((r = batch.next()) != null) {
                expectedSkip++;
                assertEquals(expectedSkip, r.getRecordSkipCount());
                assertEquals(expectedSkip + "_2026-11-22T09:00:00", r.getRecord().event.event.recordId);
                size++;
            }
            batch.releaseBatch();
            sizes.add(size);
        }
        reader.close();
        assertEquals(List.of(1_000, 1_000, 500), sizes);
    }

    @Test
    void aRestoredReaderGoesOnAfterWhatWasHandedOver() throws IOException {
        HistoryFormat format = format(write());
        FileSourceSplit split = manifest().updateWithCheckpointedPosition(
                new CheckpointedPosition(CheckpointedPosition.NO_OFFSET, 1_234));
        BulkFormat.Reader<ParsedRecord> reader = format.restoreReader(new Configuration(), split);
        BulkFormat.RecordIterator<ParsedRecord> batch = reader.readBatch();
        RecordAndPosition<ParsedRecord> first = batch.next();
        assertEquals("1235_2026-11-22T09:00:00", first.getRecord().event.event.recordId);
        assertEquals(1_235, first.getRecordSkipCount());
        long rest = 1;
        while (batch != null) {
            while (batch.next() != null) rest++;
            batch = reader.readBatch();
        }
        assertEquals(RECORDS - 1_234, rest);
        assertNull(reader.readBatch());
        reader.close();
    }

    private Path write() throws IOException {
        ByteArrayOutputStream lines = new ByteArrayOutputStream();
        for (int i = 1; i <= RECORDS; i++) {
            lines.write(Fixtures.query(i, "select", 0, i));
            lines.write('\n');
        }
        Path file = dir.resolve("audit.log");
        Files.write(file, lines.toByteArray());
        return file;
    }

    private HistoryFormat format(Path file) {
        return new HistoryFormat(List.of(file.toString()), new FileRecords.Settings("db-1", "percona-json", "UTC",
                Fixtures.T0.toEpochMilli(), 3_600_000L, ComplianceSettings.defaults()), null);
    }

    private FileSourceSplit manifest() throws IOException {
        Path manifest = Files.writeString(dir.resolve("files.txt"), "audit.log\n");
        return new FileSourceSplit("0", new org.apache.flink.core.fs.Path(manifest.toUri()), 0, Files.size(manifest),
                0, Files.size(manifest));
    }
}
