package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.flink.history.FileRecords;
import io.auditpipe.flink.history.HistoryFormat;
import io.auditpipe.flink.history.TimeFloors;
import io.auditpipe.flink.records.ParsedRecord;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The import's reader hands its records over in bounded batches, each record with the count handed
 * over up to it, and a reader restored from that count goes on with the next record; each record
 * carries the earliest time of the records still to come ({@link TimeFloors}), whatever the order
 * of their times.
 */
class HistoryFormatTest {
    private static final int RECORDS = 2_500;

    @TempDir Path dir;

    @Test
    void batchesAreBoundedAndCarryTheCountHandedOver() throws IOException {
        HistoryFormat format = format(write());
        BulkFormat.Reader<ParsedRecord> reader =
                format.createReader(new Configuration(), manifest());
        List<Integer> sizes = new ArrayList<>();
        long expectedSkip = 0;
        BulkFormat.RecordIterator<ParsedRecord> batch;
        while ((batch = reader.readBatch()) != null) {
            int size = 0;
            RecordAndPosition<ParsedRecord> r;
            while ((r = batch.next()) != null) {
                expectedSkip++;
                assertEquals(expectedSkip, r.getRecordSkipCount());
                assertEquals(
                        expectedSkip + "_2026-11-22T09:00:00", r.getRecord().event.event.recordId);
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
        FileSourceSplit split =
                manifest()
                        .updateWithCheckpointedPosition(
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

    @Test
    void eachRecordKnowsTheEarliestTimeStillToComeWhateverTheOrderOfTheTimes() throws IOException {
        // a clock stepped back an hour halfway through the first file, a malformed line (a dead
        // letter, timed at the import's start), and a second file whose times fall inside the first
        // one's
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        for (int i = 1; i <= RECORDS; i++) {
            first.write(Fixtures.query(i, "select", 0, i < RECORDS / 2 ? i : i - 3_600));
            first.write('\n');
            if (i == 1_700) first.write(Fixtures.utf8("{\"audit_record\":{\"name\":\"Query\"}}\n"));
        }
        ByteArrayOutputStream second = new ByteArrayOutputStream();
        for (int i = 1; i <= 800; i++) {
            second.write(Fixtures.query(RECORDS + i, "select", 0, 600 + i));
            second.write('\n');
        }
        List<Path> files =
                List.of(
                        Files.write(dir.resolve("audit.log.01"), first.toByteArray()),
                        Files.write(dir.resolve("audit.log"), second.toByteArray()));
        FileRecords.Settings settings = settings();
        long[] scanned = {0};
        TimeFloors floors =
                TimeFloors.scan(
                        files,
                        settings,
                        n -> {
                            synchronized (scanned) {
                                scanned[0] += n;
                            }
                        });
        assertEquals(
                Files.size(files.get(0)) + Files.size(files.get(1)),
                scanned[0],
                "every byte read once");
        List<ParsedRecord> read = readAll(files, settings, floors);
        assertEquals(RECORDS + 1 + 800, read.size());
        long[] rest = new long[read.size() + 1]; // the earliest time from each record to the end
        rest[read.size()] = Long.MAX_VALUE;
        for (int i = read.size() - 1; i >= 0; i--)
            rest[i] = Math.min(rest[i + 1], read.get(i).eventTimeMillis());
        for (int i = 0; i < read.size(); i++) {
            int inFile = i <= RECORDS ? i : i - RECORDS - 1;
            int blockStart = i - inFile % TimeFloors.BLOCK;
            assertEquals(
                    rest[blockStart],
                    read.get(i).laterNotBefore,
                    "record " + i + ": its block's floor");
            assertTrue(
                    read.get(i).laterNotBefore <= rest[i],
                    "record " + i + ": never above a time still to come");
        }
        long stepped = Fixtures.T0.toEpochMilli() + (RECORDS / 2 - 3_600) * 1000L;
        assertEquals(
                stepped,
                read.get(0).laterNotBefore,
                "the first half waits for the records an hour back");
        assertEquals(
                Fixtures.T0.toEpochMilli() + 601_000L,
                read.get(RECORDS + 1).laterNotBefore,
                "then for the second file's");

        Files.write(
                files.get(1),
                Fixtures.query(RECORDS + 801, "select", 0, 1),
                java.nio.file.StandardOpenOption.APPEND);
        List<ParsedRecord> grown = readAll(files, settings, floors);
        assertEquals(
                TimeFloors.UNKNOWN,
                grown.get(grown.size() - 1).laterNotBefore,
                "a record the scan did not read knows nothing");
    }

    /** Every record of {@code files} as the import reads them, with the floors the scan found. */
    private List<ParsedRecord> readAll(
            List<Path> files, FileRecords.Settings settings, TimeFloors floors) throws IOException {
        return readAll(
                new HistoryFormat(
                        files.stream().map(Path::toString).toList(), settings, null, floors));
    }

    private List<ParsedRecord> readAll(HistoryFormat format) throws IOException {
        List<ParsedRecord> out = new ArrayList<>();
        BulkFormat.Reader<ParsedRecord> reader =
                format.createReader(new Configuration(), manifest());
        BulkFormat.RecordIterator<ParsedRecord> batch;
        while ((batch = reader.readBatch()) != null) {
            RecordAndPosition<ParsedRecord> r;
            while ((r = batch.next()) != null) out.add(r.getRecord());
            batch.releaseBatch();
        }
        reader.close();
        return out;
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

    private HistoryFormat format(Path file) throws IOException {
        return new HistoryFormat(
                List.of(file.toString()),
                settings(),
                null,
                TimeFloors.scan(List.of(file), settings(), n -> {}));
    }

    private static FileRecords.Settings settings() {
        return new FileRecords.Settings(
                "db-1",
                "percona-json",
                "UTC",
                Fixtures.T0.toEpochMilli(),
                3_600_000L,
                ComplianceSettings.defaults());
    }

    private FileSourceSplit manifest() throws IOException {
        Path manifest = Files.writeString(dir.resolve("files.txt"), "audit.log\n");
        return new FileSourceSplit(
                "0",
                new org.apache.flink.core.fs.Path(manifest.toUri()),
                0,
                Files.size(manifest),
                0,
                Files.size(manifest));
    }
}
