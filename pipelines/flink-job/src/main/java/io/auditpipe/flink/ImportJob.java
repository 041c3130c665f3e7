package io.auditpipe.flink;

import io.auditpipe.flink.history.FileRecords;
import io.auditpipe.flink.history.HistoryFormat;
import io.auditpipe.flink.history.ImportCounters;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.ParsedRecord;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * {@code auditpipe import}: a server's existing audit logs through the job's own graph
 * ({@link AuditPipeline}) over a bounded source, in an embedded Flink of its own (this JVM), into
 * the archive, the evidence collection, the stats and the rollups ({@link JobWiring#historySinks};
 * docs/archive.md "Imported history").
 *
 * <pre>
 * ImportJob --config job.properties --server NAME --format F --timezone ZONE --chain NAME
 *           --work DIR [--known-ids FILE] FILE...
 * </pre>
 *
 * <p>The summary is one JSON object in {@code <work>/summary.json}; progress and errors go to
 * stderr; Flink's own log lines go where log4j sends them (the CLI: a file in the work folder).
 *
 * The files are read oldest first (by their first record's time; a file without one last), so the
 * chain and the event-time windows see the server's records in their own order, as live shipping
 * does. Progress goes to stderr every few seconds. Exit
 * codes: 0 imported, 1 the import failed (what was committed stays, and importing again skips it),
 * 2 bad arguments, an unreadable file, or a file none of whose first records is of the format.
 */
public final class ImportJob {
    private ImportJob() {}

    /** How many of a file's first records are read to order the files and to tell a wrong format. */
    static final int HEAD_RECORDS = 50;
    /** ... within this many of its first lines. */
    static final long HEAD_LINES = 10_000;

    public static void main(String[] args) throws Exception {
        Map<String, String> named = new java.util.HashMap<>();
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--")) {
                if (i + 1 >= args.length) fail(2, args[i] + " needs a value");
                named.put(args[i].substring(2), args[++i]);
            } else {
                files.add(Path.of(args[i]));
            }
        }
        for (String required : List.of("config", "server", "format", "timezone", "chain", "work")) {
            if (!named.containsKey(required)) fail(2, "usage: ImportJob --config job.properties --server NAME --format F"
                    + " --timezone ZONE --chain NAME --work DIR [--known-ids FILE] FILE...  (--" + required + " missing)");
        }
        if (files.isEmpty()) fail(2, "no file to import");
        JobOptions.Loaded loaded;
        try {
            loaded = JobOptions.load(Path.of(named.get("config")));
        } catch (IllegalArgumentException | IOException e) {
            fail(2, e.getMessage());
            return;
        }
        Configuration options = loaded.job;
        if (!options.contains(JobOptions.ARCHIVE_PATH)) {
            fail(2, "import writes the archive, and archive.enabled is false in the configuration");
        }
        FileRecords.Settings settings;
        try {
            settings = new FileRecords.Settings(named.get("server"), named.get("format"), named.get("timezone"),
                    System.currentTimeMillis(), options.get(JobOptions.EVENT_TIME_MAX_AHEAD).toMillis(),
                    JobOptions.compliance(options));
        } catch (IllegalArgumentException e) {
            fail(2, e.getMessage());
            return;
        }
        List<Path> ordered = oldestFirst(files, settings);
        long totalBytes = 0;
        for (Path f : ordered) totalBytes += Files.size(f);

        Path work = Path.of(named.get("work"));
        Files.createDirectories(work);
        Path manifest = work.resolve("files.txt");
        Files.write(manifest, ordered.stream().map(p -> p.toAbsolutePath().toString()).toList(), StandardCharsets.UTF_8);

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(flinkSettings(options, work));
        AuditPipelineJob.configureCheckpointing(env, options);
        HistoryFormat format = new HistoryFormat(ordered.stream().map(p -> p.toAbsolutePath().toString()).toList(),
                settings, named.get("known-ids"));
        FileSource<ParsedRecord> source = FileSource.forBulkFileFormat(format,
                new org.apache.flink.core.fs.Path(manifest.toUri())).build();
        new AuditPipeline(options, PipelineSources.history(source, named.get("chain")), JobWiring.historySinks(options)).build(env);

        long started = System.nanoTime();
        JobClient job = env.executeAsync("auditpipe import " + named.get("chain"));
        Progress progress = new Progress(totalBytes, started);
        while (!job.getJobExecutionResult().isDone()) {
            Thread.sleep(500);
            progress.maybePrint(false);
        }
        try {
            job.getJobExecutionResult().get();
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            while (cause.getCause() != null) cause = cause.getCause();
            System.err.println("import failed: " + cause);
            writeSummary(work, summary(named.get("chain"), started, false));
            System.exit(1);
        }
        progress.maybePrint(true);
        writeSummary(work, summary(named.get("chain"), started, true));
        System.exit(0);
    }

    /** The files by their first record's time, a file without a readable first event last; a wrong format is refused. */
    static List<Path> oldestFirst(List<Path> files, FileRecords.Settings settings) {
        record First(Path file, long time, int given) {}
        List<First> firsts = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            Path f = files.get(i);
            if (!Files.isRegularFile(f) || !Files.isReadable(f)) fail(2, "cannot read " + f + ": not a readable file");
            List<ParsedRecord> head;
            try {
                head = FileRecords.head(f, settings, HEAD_RECORDS, HEAD_LINES);
            } catch (IOException e) {
                fail(2, "cannot read " + f + ": " + e.getMessage());
                return List.of();
            }
            long time = Long.MAX_VALUE;
            String reason = null;
            for (ParsedRecord r : head) {
                if (r.event != null) {
                    time = Math.min(time, r.event.event.eventTimeMillis);
                } else if (reason == null) {
                    reason = r.deadLetter.reason;
                }
            }
            if (time == Long.MAX_VALUE && (!head.isEmpty() || hasLines(f))) {
                fail(2, f + ": none of its first " + (head.isEmpty() ? HEAD_LINES + " lines holds a record"
                        : head.size() + " records is") + " " + settings.format + (reason == null ? "" : " (the first: "
                        + reason + ")") + "; give the file's format with --format");
            }
            firsts.add(new First(f, time, i));
        }
        firsts.sort(Comparator.comparingLong(First::time).thenComparingInt(First::given));
        return firsts.stream().map(First::file).toList();
    }

    private static boolean hasLines(Path f) {
        try (java.io.InputStream in = f.getFileName().toString().endsWith(".gz")
                ? new java.util.zip.GZIPInputStream(Files.newInputStream(f)) : Files.newInputStream(f)) {
            int b;
            while ((b = in.read()) >= 0) {
                if (b != '\n' && b != '\r' && b != ' ') return true;
            }
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * The embedded Flink: both cores, no restarts (a failed import stops, and importing again skips
     * what was committed), checkpoints in the import's own folder (they commit the archive's files).
     */
    static Configuration flinkSettings(Configuration options, Path work) {
        Configuration flink = new Configuration();
        flink.setString("execution.runtime-mode", RuntimeExecutionMode.STREAMING.name());
        flink.setString("parallelism.default", "2");
        flink.setString("restart-strategy.type", "none");
        flink.setString("execution.checkpointing.dir", work.resolve("checkpoints").toUri().toString());
        flink.setString("rest.bind-port", "0");
        return flink;
    }

    private static void writeSummary(Path work, String json) throws IOException {
        Files.writeString(work.resolve("summary.json"), json + "\n", StandardCharsets.UTF_8);
    }

    static String summary(String chain, long startedNanos, boolean done) {
        double seconds = (System.nanoTime() - startedNanos) / 1e9;
        StringBuilder reasons = new StringBuilder("{");
        for (Map.Entry<String, Long> r : ImportCounters.reasons().entrySet()) {
            if (reasons.length() > 1) reasons.append(',');
            reasons.append(FileRecords.quote(r.getKey())).append(':').append(r.getValue());
        }
        reasons.append('}');
        return "{\"chain\":" + FileRecords.quote(chain) + ",\"done\":" + done
                + ",\"records\":" + ImportCounters.records.get()
                + ",\"dead_letters\":" + ImportCounters.deadLetters.get()
                + ",\"already_present\":" + ImportCounters.alreadyPresent.get()
                + ",\"framing\":" + ImportCounters.framing.get()
                + ",\"files\":" + ImportCounters.filesDone.get()
                + ",\"seconds\":" + String.format(java.util.Locale.ROOT, "%.1f", seconds)
                + ",\"dead_letter_reasons\":" + reasons + "}";
    }

    /** A line on stderr every few seconds: bytes read of the files' total, records, rate, time left. */
    private static final class Progress {
        private final long totalBytes;
        private final long started;
        private long lastPrint;

        Progress(long totalBytes, long started) {
            this.totalBytes = totalBytes;
            this.started = started;
            this.lastPrint = started;
        }

        void maybePrint(boolean last) {
            long now = System.nanoTime();
            if (!last && now - lastPrint < 5_000_000_000L) return;
            lastPrint = now;
            double seconds = Math.max((now - started) / 1e9, 1e-3);
            long bytes = ImportCounters.bytesRead.get();
            long records = ImportCounters.records.get();
            double share = totalBytes == 0 ? 1 : Math.min(1.0, (double) bytes / totalBytes);
            String eta = share <= 0 || last ? "" : String.format(java.util.Locale.ROOT, ", about %s left",
                    duration((long) (seconds / share - seconds)));
            System.err.printf(java.util.Locale.ROOT, "import: %.0f%% of %s read, %,d records (%,.0f/s)%s%n",
                    share * 100, size(totalBytes), records, records / seconds, eta);
        }

        private static String duration(long s) {
            return s >= 3600 ? String.format("%dh%02dm", s / 3600, s % 3600 / 60) : s >= 60
                    ? String.format("%dm%02ds", s / 60, s % 60) : s + "s";
        }

        private static String size(long b) {
            return b >= 1 << 30 ? String.format(java.util.Locale.ROOT, "%.1f GiB", b / (double) (1 << 30))
                    : b >= 1 << 20 ? String.format(java.util.Locale.ROOT, "%.1f MiB", b / (double) (1 << 20))
                    : String.format(java.util.Locale.ROOT, "%.1f KiB", b / 1024.0);
        }
    }

    private static void fail(int code, String message) {
        System.err.println(message);
        System.exit(code);
    }
}
