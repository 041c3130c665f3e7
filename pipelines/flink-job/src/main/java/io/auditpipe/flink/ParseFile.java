package io.auditpipe.flink;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.history.FileRecords;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.parser.AuditFormats;
import io.auditpipe.parser.Framing;
import io.auditpipe.reader.RecordReader;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * {@code auditpipe parse}: an audit log file through exactly the job's reading path ({@link
 * RecordReader}, as {@link AuditRecordDeserializer} uses it), offline. Each line that becomes an
 * event is printed as the document the store would hold (one JSON object per line, on stdout); each
 * line that would be a dead letter is reported on stderr with its line number and reason, and the
 * exit code is 1 if there was any (2: bad arguments or an unreadable file). Lines are split on LF,
 * byte for byte, like the collectors; empty lines are skipped like the collectors skip them;
 * multi-line records are framed with the format's {@link Framing}, as the local collector frames
 * them.
 *
 * <p>The original record and the SQL text are masked as the job masks them. {@code --enrich} adds
 * what enrichment adds (category, action, tables, data classes, principal class, access violations,
 * controls) with the compliance settings of {@code --compliance} (the job's {@code compliance.*}
 * properties, which the CLI writes from the config file).
 *
 * <p>{@code --formats} prints each format's name and framing patterns as JSON lines instead (the
 * CLI's test compares them with cli/auditpipe/formats.py, which configures the collectors).
 */
public final class ParseFile {
    private static final JsonWriterSettings JSON =
            JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    private ParseFile() {}

    public static void main(String[] args) throws IOException {
        String file = null,
                format = "percona-json",
                server = "parsed",
                timezone = "UTC",
                compliance = null;
        boolean enrich = false;
        if (args.length == 1 && "--formats".equals(args[0])) {
            for (String name : AuditFormats.names()) {
                Framing f = AuditFormats.forName(name).framing();
                String signature = AuditFormats.signatures().get(name);
                System.out.println(
                        "{\"name\":"
                                + FileRecords.quote(name)
                                + ",\"start\":"
                                + (f.start() == null ? "null" : FileRecords.quote(f.start()))
                                + ",\"end\":"
                                + (f.end() == null ? "null" : FileRecords.quote(f.end()))
                                + ",\"signature\":"
                                + (signature == null ? "null" : FileRecords.quote(signature))
                                + ",\"tried\":"
                                + new java.util.ArrayList<>(AuditFormats.signatures().keySet())
                                        .indexOf(name)
                                + "}");
            }
            return;
        }
        for (int i = 0; i < args.length; i++) {
            if ("--enrich".equals(args[i])) {
                enrich = true;
                continue;
            }
            if (args[i].startsWith("--") && i + 1 >= args.length) {
                System.err.println(args[i] + " needs a value");
                System.exit(2);
            }
            switch (args[i]) {
                case "--format" -> format = args[++i];
                case "--server" -> server = args[++i];
                case "--timezone" -> timezone = args[++i];
                case "--compliance" -> compliance = args[++i];
                default -> file = args[i];
            }
        }
        if (file == null) {
            System.err.println(
                    "usage: ParseFile FILE [--format F] [--server NAME] [--timezone ZONE] [--enrich [--compliance PROPERTIES]]");
            System.exit(2);
        }
        if (AuditFormats.forName(format) == null) {
            System.err.println(
                    "unknown format '"
                            + format
                            + "' (known: "
                            + String.join(", ", AuditFormats.names())
                            + ")");
            System.exit(2);
        }
        try {
            java.time.ZoneId.of(timezone);
        } catch (java.time.DateTimeException e) {
            System.err.println("--timezone: '" + timezone + "' is not a time zone");
            System.exit(2);
        }
        ComplianceSettings settings = ComplianceSettings.defaults();
        if (compliance != null) {
            java.util.Properties p = new java.util.Properties();
            try (java.io.Reader r =
                    Files.newBufferedReader(Path.of(compliance), StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (IOException e) {
                System.err.println("cannot read " + compliance + ": " + e.getMessage());
                System.exit(2);
            }
            java.util.Map<String, String> m = new java.util.TreeMap<>();
            for (String k : p.stringPropertyNames()) m.put(k, p.getProperty(k));
            try {
                settings = ComplianceSettings.fromProperties(m);
            } catch (IllegalArgumentException e) {
                System.err.println(
                        "invalid compliance settings in "
                                + compliance
                                + ":\n  - "
                                + e.getMessage());
                System.exit(2);
            }
        }
        RecordReader reader = new RecordReader(settings);
        Path path = Path.of(file);
        byte[] key =
                ("{\"v\":1,\"server\":"
                                + FileRecords.quote(server)
                                + ",\"format\":"
                                + FileRecords.quote(format)
                                + ",\"source\":"
                                + FileRecords.quote(path.toAbsolutePath().toString())
                                + ",\"collector\":\"auditpipe-parse\",\"timezone\":"
                                + FileRecords.quote(timezone)
                                + "}")
                        .getBytes(StandardCharsets.UTF_8);
        long now = System.currentTimeMillis();
        long written =
                // when the records were received: a syslog time without a year takes that year (or
                // the one before)
                now;
        try {
            written = Files.getLastModifiedTime(path).toMillis();
        } catch (IOException e) {
            // reading the file says what is wrong with it
        }
        long lineNumber = 0, events = 0, dead = 0, framing = 0;
        // records are framed as the collector frames them (one per line, or by their first or last
        // line); lines are matched and joined as ISO-8859-1 text, which keeps every byte as it was
        Framing.Framer framer = AuditFormats.forName(format).framing().framer();
        PrintStream out =
                new PrintStream(
                        new BufferedOutputStream(System.out, 1 << 16),
                        false,
                        StandardCharsets.UTF_8);
        try (InputStream in = Files.newInputStream(path)) {
            io.auditpipe.flink.history.Lines lines = new io.auditpipe.flink.history.Lines(in);
            byte[] line;
            boolean more = true;
            while (more) {
                line = lines.next();
                java.util.List<Framing.Framer.Record> records;
                if (line == null) {
                    more = false;
                    records = framer.finish();
                } else {
                    lineNumber++;
                    if (line.length == 0) continue;
                    records = framer.add(new String(line, StandardCharsets.ISO_8859_1), lineNumber);
                }
                for (Framing.Framer.Record record : records) {
                    ParsedRecord r =
                            FileRecords.read(
                                    reader,
                                    key,
                                    record,
                                    written,
                                    new KafkaOrigin(
                                            path.getFileName().toString(),
                                            0,
                                            record.firstLine,
                                            now),
                                    Long.MAX_VALUE / 4);
                    if (r == null) {
                        framing++;
                    } else if (r.deadLetter != null) {
                        dead++;
                        out.flush();
                        System.err.println(
                                path.getFileName()
                                        + ":"
                                        + record.firstLine
                                        + ": "
                                        + r.deadLetter.reason);
                    } else {
                        events++;
                        org.bson.Document doc = EventDocument.of(r.event);
                        if (!enrich) EventDocument.ENRICHMENT_FIELDS.forEach(doc::remove);
                        out.println(doc.toJson(JSON));
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("cannot read " + file + ": " + e.getMessage());
            System.exit(2);
        }
        out.flush();
        System.err.println(
                events
                        + " events, "
                        + dead
                        + " dead letters, "
                        + lineNumber
                        + " lines ("
                        + format
                        + ")"
                        + (framing > 0
                                ? "; "
                                        + framing
                                        + " pieces of the file's own framing (XML declaration, <AUDIT>, JSON brackets) skipped"
                                : ""));
        System.exit(dead > 0 ? 1 : 0);
    }
}
