package io.auditpipe.flink.history;

import io.auditpipe.enrich.Enricher;
import io.auditpipe.flink.records.ParsedRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.IteratorResultIterator;

/**
 * The records of an import's files, in the order given (oldest first: a server's records then reach
 * the chain and the event-time windows in their own order, as when shipped live), read by Flink's
 * FileSource as the records of one file: the import's manifest, a file listing them ({@code
 * ImportJob} writes it; its content is not read here). A record whose id the archive or the store
 * already holds ({@link KnownIds}) is left out and counted; every other record, dead letters
 * included, goes on to the pipeline, with the earliest time of the records still to come ({@link
 * TimeFloors}; {@link ParsedRecord#laterNotBefore}), which the import's watermark follows.
 *
 * <p>Records go out in batches of {@link #BATCH} (the source's hand-over to the pipeline holds a
 * few batches): memory stays bounded however long the history, and the pipeline works while the
 * files are read. The position is the number of records handed over, so that a restored reader
 * skips them.
 */
public final class HistoryFormat implements BulkFormat<ParsedRecord, FileSourceSplit> {
    private static final long serialVersionUID = 1L;
    static final int BATCH = 1_000;

    private final List<String> files;
    private final FileRecords.Settings settings;
    private final String knownIds;
    private final TimeFloors floors;

    /**
     * {@code knownIds}: the file of ids already held (one per line), or null for none; {@code
     * floors}: the files' {@link TimeFloors#scan}, in this order.
     */
    public HistoryFormat(
            List<String> files, FileRecords.Settings settings, String knownIds, TimeFloors floors) {
        this.files = List.copyOf(files);
        this.settings = Objects.requireNonNull(settings, "settings");
        this.knownIds = knownIds;
        this.floors = Objects.requireNonNull(floors, "floors");
    }

    @Override
    public BulkFormat.Reader<ParsedRecord> createReader(
            Configuration config, FileSourceSplit manifest) throws IOException {
        return new Batches(
                new Reader(knownIds == null ? new KnownIds() : KnownIds.read(Path.of(knownIds))),
                0);
    }

    @Override
    public BulkFormat.Reader<ParsedRecord> restoreReader(
            Configuration config, FileSourceSplit manifest) throws IOException {
        Reader reader =
                new Reader(knownIds == null ? new KnownIds() : KnownIds.read(Path.of(knownIds)));
        long handedOver =
                manifest.getReaderPosition()
                        .map(CheckpointedPosition::getRecordsAfterOffset)
                        .orElse(0L);
        for (long i = 0; i < handedOver && reader.read() != null; i++) {
            // skipped: handed over before the checkpoint
        }
        return new Batches(reader, handedOver);
    }

    @Override
    public boolean isSplittable() {
        return false;
    }

    @Override
    public TypeInformation<ParsedRecord> getProducedType() {
        return TypeInformation.of(ParsedRecord.class);
    }

    /** The records in batches of {@link #BATCH}, each with the count handed over before it. */
    private static final class Batches implements BulkFormat.Reader<ParsedRecord> {
        private final Reader reader;
        private long handedOver;

        Batches(Reader reader, long handedOver) {
            this.reader = reader;
            this.handedOver = handedOver;
        }

        @Override
        public BulkFormat.RecordIterator<ParsedRecord> readBatch() throws IOException {
            List<ParsedRecord> batch = new ArrayList<>(BATCH);
            ParsedRecord r;
            while (batch.size() < BATCH && (r = reader.read()) != null) batch.add(r);
            if (batch.isEmpty()) return null;
            IteratorResultIterator<ParsedRecord> records =
                    new IteratorResultIterator<>(
                            batch.iterator(), CheckpointedPosition.NO_OFFSET, handedOver);
            handedOver += batch.size();
            return records;
        }

        @Override
        public void close() throws IOException {
            reader.close();
        }
    }

    private final class Reader {
        private final KnownIds known;
        private final Enricher enricher = new Enricher(settings.compliance);
        private int next;
        private FileRecords current;
        private TimeFloors.Cursor floor;
        private long bytesBefore;

        Reader(KnownIds known) {
            this.known = known;
        }

        ParsedRecord read() throws IOException {
            while (true) {
                if (current == null) {
                    if (next == files.size()) return null;
                    floor = floors.cursor(next);
                    current = new FileRecords(Path.of(files.get(next++)), settings, enricher);
                    bytesBefore = 0;
                }
                ParsedRecord r = current.next();
                long bytes = current.bytesRead();
                ImportCounters.bytesRead.addAndGet(bytes - bytesBefore);
                bytesBefore = bytes;
                if (r == null) {
                    ImportCounters.framing.addAndGet(current.framing);
                    ImportCounters.filesDone.incrementAndGet();
                    current.close();
                    current = null;
                    continue;
                }
                ImportCounters.records.incrementAndGet();
                r.laterNotBefore =
                        floor.floor(
                                r.event != null
                                        ? r.event.origin.offset
                                        : r.deadLetter.origin.offset);
                if (r.deadLetter == null
                        && known.size() > 0
                        && known.contains(r.event.event.id)) { // a first import hashes nothing
                    ImportCounters.alreadyPresent.incrementAndGet();
                    continue;
                }
                return r;
            }
        }

        void close() throws IOException {
            if (current != null) current.close();
        }
    }
}
