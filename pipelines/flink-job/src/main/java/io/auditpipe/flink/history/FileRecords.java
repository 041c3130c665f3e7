package io.auditpipe.flink.history;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.parser.AuditFormats;
import io.auditpipe.parser.Framing;
import io.auditpipe.parser.JsonEscape;
import io.auditpipe.parser.ParseResult;
import io.auditpipe.parser.SourceDescriptor;
import io.auditpipe.reader.RecordReader;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * One audit log file's records as the live path makes them: lines split on LF as the collectors
 * split them, framed with the format's {@link Framing} as the local collector frames them, read by
 * the job's own reader ({@link AuditRecordDeserializer#toRecord}) under the key a collector would
 * send ({@code collector: auditpipe-import}, the file as {@code source}). A name ending in {@code
 * .gz} is read through gzip. Each record's origin is {@code import:<file>}, partition 0, the
 * record's first line as offset, and the import's start as its timestamp: a dead letter's id is the
 * same whenever the file is imported again.
 */
public final class FileRecords implements Closeable {
    /** The topic-like name of a file's records' origin. */
    public static String origin(Path file) {
        return "import:" + file.toAbsolutePath();
    }

    private final Path file;
    private final CountingStream counted;
    private final InputStream in;
    private final Lines lines;
    private final Framing.Framer framer;
    private final RecordReader reader;
    private final byte[] key;
    private final long importedAtMillis;

    /**
     * The file's modification time: when its records were received, for a syslog time without a
     * year.
     */
    private final long writtenMillis;

    private final long maxAheadMillis;

    /** What the key says, for {@link #nextStreamTime}'s parsing without the reader. */
    private final SourceDescriptor source;

    private final ArrayDeque<Framing.Framer.Record> framed = new ArrayDeque<>();
    private long lineNumber;

    /**
     * Lines read before {@link #next} gives up (the head of a file: a wrong format frames no
     * record).
     */
    private long lineLimit = Long.MAX_VALUE;

    private boolean ended;

    /**
     * Records that were only the file's own framing (an XML declaration, a JSON array's brackets).
     */
    public long framing;

    /** The first line of the record {@link #nextStreamTime} gave last. */
    public long lastFirstLine;

    /** {@link #nextStreamTime} at the end of the file. */
    public static final long END = Long.MAX_VALUE;

    public FileRecords(Path file, Settings settings, Enricher enricher) throws IOException {
        this.file = file;
        this.counted = new CountingStream(Files.newInputStream(file));
        InputStream raw = new BufferedInputStream(counted, 1 << 16);
        this.in =
                file.getFileName().toString().endsWith(".gz")
                        ? new GZIPInputStream(raw, 1 << 16)
                        : raw;
        this.lines = new Lines(in);
        this.framer = AuditFormats.forName(settings.format).framing().framer();
        this.reader = new RecordReader(enricher, true);
        this.key = settings.key(file);
        this.importedAtMillis = settings.importedAtMillis;
        this.writtenMillis = Files.getLastModifiedTime(file).toMillis();
        this.maxAheadMillis = settings.maxAheadMillis;
        try {
            this.source = SourceDescriptor.parseKey(key);
        } catch (SourceDescriptor.InvalidSourceKeyException e) {
            throw new IllegalArgumentException(
                    "the import's own key does not read: " + e.getMessage(), e);
        }
    }

    /** Bytes of the file read so far (compressed bytes for a gzip file). */
    public long bytesRead() {
        return counted.count;
    }

    /** The next record (an event or a dead letter), or null at the end of the file. */
    public ParsedRecord next() throws IOException {
        Framing.Framer.Record record;
        while ((record = nextFramed()) != null) {
            ParsedRecord r =
                    read(
                            reader,
                            key,
                            record,
                            writtenMillis,
                            new KafkaOrigin(origin(file), 0, record.firstLine, importedAtMillis),
                            maxAheadMillis);
            if (r != null) return r;
            framing++;
        }
        return null;
    }

    /**
     * A framed record of a file, read as an event or a dead letter written at {@code
     * writtenMillis}; null when it is only the file's framing.
     */
    public static ParsedRecord read(
            RecordReader reader,
            byte[] key,
            Framing.Framer.Record record,
            long writtenMillis,
            KafkaOrigin origin,
            long maxAheadMillis) {
        byte[] bytes = record.text.getBytes(StandardCharsets.ISO_8859_1);
        return AuditRecordDeserializer.toRecord(
                reader.read(key, bytes, writtenMillis), key, bytes, origin, maxAheadMillis);
    }

    /**
     * The stream time {@link #next} would give the next record ({@link
     * ParsedRecord#eventTimeMillis}: its own time when trusted, else the import's start, a dead
     * letter's too), with its first line in {@link #lastFirstLine}; {@link #END} at the end of the
     * file. Only parsed, neither enriched nor masked: a tenth of the work of {@link #next}, for
     * {@link TimeFloors}.
     */
    public long nextStreamTime() throws IOException {
        Framing.Framer.Record record;
        while ((record = nextFramed()) != null) {
            ParseResult parsed;
            try {
                parsed =
                        AuditFormats.parse(
                                record.text.getBytes(StandardCharsets.ISO_8859_1),
                                source,
                                writtenMillis);
            } catch (RuntimeException e) {
                parsed =
                        ParseResult.failed(
                                "parser error: " + e); // RecordReader's reading of it too
            }
            if (parsed.isFraming()) continue;
            lastFirstLine = record.firstLine;
            if (!parsed.isOk()) return importedAtMillis;
            long t = parsed.event().eventTimeMillis;
            return t <= importedAtMillis + maxAheadMillis ? t : importedAtMillis;
        }
        return END;
    }

    /** The next record as the format frames it, or null at the end of the file. */
    private Framing.Framer.Record nextFramed() throws IOException {
        while (true) {
            Framing.Framer.Record record = framed.poll();
            if (record != null) return record;
            if (ended || lineNumber >= lineLimit) return null;
            byte[] line = lines.next();
            if (line == null) {
                ended = true;
                framed.addAll(framer.finish());
            } else {
                lineNumber++;
                if (line.length > 0)
                    framed.addAll(
                            framer.add(new String(line, StandardCharsets.ISO_8859_1), lineNumber));
            }
        }
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /**
     * What every file of an import shares: the server, format and time zone, and when the import
     * began.
     */
    public static final class Settings implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        public final String server;
        public final String format;
        public final String timezone;
        public final long importedAtMillis;
        public final long maxAheadMillis;
        public final ComplianceSettings compliance;

        public Settings(
                String server,
                String format,
                String timezone,
                long importedAtMillis,
                long maxAheadMillis,
                ComplianceSettings compliance) {
            if (AuditFormats.forName(format) == null) {
                throw new IllegalArgumentException(
                        "unknown format '"
                                + format
                                + "' (known: "
                                + String.join(", ", AuditFormats.names())
                                + ")");
            }
            this.server = server;
            this.format = format;
            this.timezone = timezone;
            this.importedAtMillis = importedAtMillis;
            this.maxAheadMillis = maxAheadMillis;
            this.compliance = compliance;
        }

        /**
         * The message key a collector shipping {@code file} would send
         * (schemas/audit-raw-key.schema.json).
         */
        byte[] key(Path file) {
            return ("{\"v\":1,\"server\":"
                            + quote(server)
                            + ",\"format\":"
                            + quote(format)
                            + ",\"source\":"
                            + quote(file.toAbsolutePath().toString())
                            + ",\"collector\":\"auditpipe-import\",\"timezone\":"
                            + quote(timezone)
                            + "}")
                    .getBytes(StandardCharsets.UTF_8);
        }
    }

    /** {@code s} as a JSON string ({@link JsonEscape#quote}). */
    public static String quote(String s) {
        return JsonEscape.quote(s);
    }

    /**
     * The first {@code n} records of a file, within its first {@code maxLines} lines (a record of a
     * wrong format can be framed from the whole file), for ordering the files and telling a wrong
     * format early; a file with lines and no record among them gives a list without events.
     */
    public static List<ParsedRecord> head(Path file, Settings settings, int n, long maxLines)
            throws IOException {
        List<ParsedRecord> out = new java.util.ArrayList<>();
        try (FileRecords records =
                new FileRecords(file, settings, new Enricher(settings.compliance))) {
            records.lineLimit = maxLines;
            ParsedRecord r;
            while (out.size() < n && (r = records.next()) != null) out.add(r);
        }
        return out;
    }

    private static final class CountingStream extends FilterInputStream {
        long count;

        CountingStream(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) count++;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) count += n;
            return n;
        }
    }
}
