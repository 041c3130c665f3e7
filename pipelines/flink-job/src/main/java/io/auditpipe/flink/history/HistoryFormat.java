package io.auditpipe.flink.history;

import io.auditpipe.enrich.Enricher;
import io.auditpipe.flink.records.ParsedRecord;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.core.fs.FSDataInputStream;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * The records of an import's files, in the order given (oldest first: a server's records then
 * reach the chain and the event-time windows in their own order, as when shipped live), read by
 * Flink's FileSource as the records of one file: the import's manifest, a file listing them
 * ({@code ImportJob} writes it; its content is not read here). A record whose id the archive or the
 * store already holds ({@link KnownIds}) is left out and counted; every other record, dead letters
 * included, goes on to the pipeline.
 */
public final class HistoryFormat extends SimpleStreamFormat<ParsedRecord> {
    private static final long serialVersionUID = 1L;

    private final List<String> files;
    private final FileRecords.Settings settings;
    private final String knownIds;

    /** {@code knownIds}: the file of ids already held (one per line), or null for none. */
    public HistoryFormat(List<String> files, FileRecords.Settings settings, String knownIds) {
        this.files = List.copyOf(files);
        this.settings = Objects.requireNonNull(settings, "settings");
        this.knownIds = knownIds;
    }

    @Override
    public StreamFormat.Reader<ParsedRecord> createReader(Configuration config, FSDataInputStream manifest) throws IOException {
        manifest.close();
        KnownIds known = knownIds == null ? new KnownIds() : KnownIds.read(Path.of(knownIds));
        return new Reader(known);
    }

    @Override
    public TypeInformation<ParsedRecord> getProducedType() {
        return TypeInformation.of(ParsedRecord.class);
    }

    private final class Reader implements StreamFormat.Reader<ParsedRecord> {
        private final KnownIds known;
        private final Enricher enricher = new Enricher(settings.compliance);
        private int next;
        private FileRecords current;
        private long bytesBefore;

        Reader(KnownIds known) {
            this.known = known;
        }

        @Override
        public ParsedRecord read() throws IOException {
            while (true) {
                if (current == null) {
                    if (next == files.size()) return null;
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
                if (r.deadLetter != null) {
                    ImportCounters.deadLetter(r.deadLetter.reason);
                } else if (known.size() > 0 && known.contains(r.event.event.id)) { // a first import hashes nothing
                    ImportCounters.alreadyPresent.incrementAndGet();
                    continue;
                }
                return r;
            }
        }

        @Override
        public void close() throws IOException {
            if (current != null) current.close();
        }
    }
}
