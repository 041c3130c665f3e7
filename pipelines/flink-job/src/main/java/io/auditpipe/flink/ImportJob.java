package io.auditpipe.flink;

import io.auditpipe.flink.history.FileRecords;
import io.auditpipe.flink.history.HistoryFormat;
import io.auditpipe.flink.history.ImportCounters;
import io.auditpipe.flink.history.TimeFloors;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.ParsedRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * {@code auditpipe import}: servers' existing audit logs through the job's own graph ({@link
 * AuditPipeline}) over a bounded source, in an embedded Flink of its own (this JVM), into the
 * archive, the evidence collection, the stats and the rollups ({@link JobWiring#historySinks};
 * docs/archive.md "Imported history").
 *
 * <pre>
 * ImportJob --config job.properties --chain NAME --work DIR
 *           --server NAME --format F --timezone ZONE [--known-ids FILE] FILE... [--server NAME ...]
 * </pre>
 *
 * <p>Each server is one Flink job, run one after another in this JVM (the code the first one
 * compiled serves the rest: warming up was a fifth of the CPU time of an 800,000-event import).
 * Server {@code i} (from 1, in the order given) has its work folder {@code <work>/<i>}, and its
 * summary there, one JSON object in {@code summary.json}; progress and errors go to stderr; Flink's
 * own log lines go where log4j sends them (the CLI: a file in the work folder).
 *
 * <p>A server's files are read oldest first (by their first record's time; a file without one
 * last), so the chain and the event-time windows see the server's records in their own order, as
 * live shipping does; and read once before for their records' times ({@link TimeFloors}), so that
 * the watermark never passes a record still to come, whatever the order of its times. Progress goes
 * to stderr every few seconds. Exit codes: 0 imported, 1 an import failed (what was committed
 * stays, importing again skips it; the servers after it are not run), 2 bad arguments, an
 * unreadable file, or a file none of whose first records is of the format (refused before any
 * server runs).
 */
public final class ImportJob {
    private ImportJob() {}

    /**
     * How many of a file's first records are read to order the files and to tell a wrong format.
     */
    static final int HEAD_RECORDS = 50;

    /** ... within this many of its first lines. */
    static final long HEAD_LINES = 10_000;

    static final String USAGE =
            "usage: ImportJob --config job.properties --chain NAME --work DIR --server NAME --format F"
                    + " --timezone ZONE [--known-ids FILE] FILE... [--server NAME ...]";

    /** One server's part of the arguments: {@code --server} and what follows it up to the next. */
    record Group(Map<String, String> named, List<Path> files) {
        String get(String key) {
            return named.get(key);
        }
    }

    /** The arguments: the run's own (before the first {@code --server}) and each server's group. */
    record Arguments(Map<String, String> run, List<Group> groups) {
        static Arguments parse(String[] args) {
            Map<String, String> run = new java.util.HashMap<>();
            List<Group> groups = new ArrayList<>();
            Group current = null;
            for (int i = 0; i < args.length; i++) {
                if (args[i].startsWith("--")) {
                    if (i + 1 >= args.length)
                        throw new IllegalArgumentException(args[i] + " needs a value");
                    String key = args[i].substring(2);
                    String value = args[++i];
                    if (key.equals("server")) {
                        current = new Group(new java.util.HashMap<>(), new ArrayList<>());
                        groups.add(current);
                    }
                    Map<String, String> into = current == null ? run : current.named();
                    if (into.put(key, value) != null)
                        throw new IllegalArgumentException("--" + key + " given twice");
                } else if (current == null) {
                    throw new IllegalArgumentException(
                            "file " + args[i] + " before the first --server");
                } else {
                    current.files().add(Path.of(args[i]));
                }
            }
            for (String required : List.of("config", "chain", "work")) {
                if (!run.containsKey(required))
                    throw new IllegalArgumentException("--" + required + " missing");
            }
            if (groups.isEmpty()) throw new IllegalArgumentException("no --server");
            java.util.Set<String> servers = new java.util.HashSet<>();
            for (Group g : groups) {
                for (String required : List.of("format", "timezone")) {
                    if (!g.named().containsKey(required)) {
                        throw new IllegalArgumentException(
                                "--" + required + " missing for server " + g.get("server"));
                    }
                }
                if (g.files().isEmpty())
                    throw new IllegalArgumentException(
                            "no file to import for server " + g.get("server"));
                if (!servers.add(g.get("server")))
                    throw new IllegalArgumentException(
                            "server " + g.get("server") + " named twice");
            }
            return new Arguments(run, groups);
        }
    }

    /** A server ready to run: its settings and its files, oldest first. */
    private record Server(
            String name, String knownIds, FileRecords.Settings settings, List<Path> files) {}

    public static void main(String[] args) throws Exception {
        Arguments arguments;
        try {
            arguments = Arguments.parse(args);
        } catch (IllegalArgumentException e) {
            fail(2, USAGE + "  (" + e.getMessage() + ")");
            return;
        }
        JobOptions.Loaded loaded;
        try {
            loaded = JobOptions.load(Path.of(arguments.run().get("config")));
        } catch (IllegalArgumentException | IOException e) {
            fail(2, e.getMessage());
            return;
        }
        Configuration options = loaded.job;
        if (!options.contains(JobOptions.ARCHIVE_PATH)) {
            fail(2, "import writes the archive, and archive.enabled is false in the configuration");
        }
        long now = System.currentTimeMillis();
        List<Server> servers = new ArrayList<>();
        for (Group g : arguments.groups()) {
            FileRecords.Settings settings;
            try {
                settings =
                        new FileRecords.Settings(
                                g.get("server"),
                                g.get("format"),
                                g.get("timezone"),
                                now,
                                options.get(JobOptions.EVENT_TIME_MAX_AHEAD).toMillis(),
                                JobOptions.compliance(options));
            } catch (IllegalArgumentException e) {
                fail(2, e.getMessage());
                return;
            }
            servers.add(
                    new Server(
                            g.get("server"),
                            g.get("known-ids"),
                            settings,
                            oldestFirst(g.files(), settings)));
        }
        String chain = arguments.run().get("chain");
        Path work = Path.of(arguments.run().get("work"));
        for (int i = 0; i < servers.size(); i++) {
            if (!run(
                    options,
                    loaded.flink,
                    chain,
                    servers.get(i),
                    work.resolve(String.valueOf(i + 1)))) System.exit(1);
        }
        System.exit(0);
    }

    /**
     * Imports one server's files as a job of its own; false if it failed (its summary says so too).
     */
    private static boolean run(
            Configuration options, Configuration stackFlink, String chain, Server server, Path work)
            throws Exception {
        Files.createDirectories(work);
        Path manifest = work.resolve("files.txt");
        List<String> paths =
                server.files().stream().map(p -> p.toAbsolutePath().toString()).toList();
        Files.write(manifest, paths, StandardCharsets.UTF_8);
        long totalBytes = 0;
        for (Path f : server.files()) totalBytes += Files.size(f);
        ImportCounters.reset();
        long started = System.nanoTime();
        Progress progress = new Progress(server.name(), totalBytes, started);
        TimeFloors floors;
        try {
            floors =
                    TimeFloors.scan(
                            server.files(),
                            server.settings(),
                            bytes -> {
                                ImportCounters.bytesScanned.addAndGet(bytes);
                                progress.maybePrint(false);
                            });
        } catch (IOException e) {
            System.err.println(
                    "import of "
                            + server.name()
                            + " failed: reading its files' times: "
                            + e.getMessage());
            writeSummary(work, summary(chain, started, false));
            return false;
        }

        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(flinkSettings(stackFlink, work));
        AuditPipelineJob.configureCheckpointing(env, options);
        HistoryFormat format =
                new HistoryFormat(paths, server.settings(), server.knownIds(), floors);
        FileSource<ParsedRecord> source =
                FileSource.forBulkFileFormat(
                                format, new org.apache.flink.core.fs.Path(manifest.toUri()))
                        .build();
        new AuditPipeline(
                        options,
                        PipelineSources.history(source, chain),
                        JobWiring.historySinks(options))
                .build(env);

        JobClient job = env.executeAsync("auditpipe import " + chain + " " + server.name());
        while (!job.getJobExecutionResult().isDone()) {
            Thread.sleep(500);
            progress.maybePrint(false);
        }
        try {
            job.getJobExecutionResult().get();
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            while (cause.getCause() != null) cause = cause.getCause();
            System.err.println("import of " + server.name() + " failed: " + cause);
            writeSummary(work, summary(chain, started, false));
            return false;
        }
        progress.maybePrint(true);
        writeSummary(work, summary(chain, started, true));
        return true;
    }

    /**
     * The files by their first record's time, a file without a readable first event last; a wrong
     * format is refused.
     */
    static List<Path> oldestFirst(List<Path> files, FileRecords.Settings settings) {
        record First(Path file, long time, int given) {}
        List<First> firsts = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            Path f = files.get(i);
            if (!Files.isRegularFile(f) || !Files.isReadable(f))
                fail(2, "cannot read " + f + ": not a readable file");
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
                fail(
                        2,
                        f
                                + ": none of its first "
                                + (head.isEmpty()
                                        ? HEAD_LINES + " lines holds a record"
                                        : head.size() + " records is")
                                + " "
                                + settings.format
                                + (reason == null ? "" : " (the first: " + reason + ")")
                                + "; give the file's format with --format");
            }
            firsts.add(new First(f, time, i));
        }
        firsts.sort(Comparator.comparingLong(First::time).thenComparingInt(First::given));
        return firsts.stream().map(First::file).toList();
    }

    private static boolean hasLines(Path f) {
        try (java.io.InputStream in =
                f.getFileName().toString().endsWith(".gz")
                        ? new java.util.zip.GZIPInputStream(Files.newInputStream(f))
                        : Files.newInputStream(f)) {
            int b;
            while ((b = in.read()) >= 0) {
                if (b != '\n' && b != '\r' && b != ' ') return true;
            }
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /** The embedded Flink's listeners' addresses, all set to loopback. */
    private static final List<String> LISTENERS =
            List.of(
                    "rest.address",
                    "rest.bind-address",
                    "jobmanager.bind-host",
                    "taskmanager.bind-host",
                    "taskmanager.host");

    /**
     * The embedded Flink: one subtask per operator, no restarts (a failed import stops, and
     * importing again skips what was committed), checkpoints in the import's own folder (they
     * commit the archive's files). A server's records go through one reader and one chain whatever
     * the parallelism, and a second subtask of the others costs a hand-over (a serialization) per
     * record and gains no core: the reader with the chain, the archive, and the windows each have a
     * thread, and the two cores are busy (an import of 3 servers of 800,000 events took 7% less
     * CPU, and the later servers ran 66,000-68,000 events/s against 58,000-61,000; 2026-11-26).
     */
    static Configuration flinkSettings(Configuration stackFlink, Path work) {
        Configuration flink = new Configuration();
        flink.setString("execution.runtime-mode", RuntimeExecutionMode.STREAMING.name());
        flink.setString("parallelism.default", "1");
        flink.setString("restart-strategy.type", "none");
        flink.setString(
                "execution.checkpointing.dir", work.resolve("checkpoints").toUri().toString());
        flink.setString("rest.bind-port", "0");
        // it holds the store's credentials: every listener on loopback (the BLOB server binds where
        // the JobManager does), and the REST settings of the stack's MiniCluster (mutual TLS with
        // the stack's key, no jar upload: cli/auditpipe/stack/flink/flink_rest.py,
        // docs/security.md)
        for (String key : LISTENERS) {
            flink.setString(key, "127.0.0.1");
        }
        stackFlink
                .toMap()
                .forEach(
                        (key, value) -> {
                            if (key.startsWith("security.ssl.") || key.startsWith("web."))
                                flink.setString(key, value);
                        });
        return flink;
    }

    private static void writeSummary(Path work, String json) throws IOException {
        Files.writeString(work.resolve("summary.json"), json + "\n", StandardCharsets.UTF_8);
    }

    static String summary(String chain, long startedNanos, boolean done) {
        double seconds = (System.nanoTime() - startedNanos) / 1e9;
        return "{\"chain\":"
                + FileRecords.quote(chain)
                + ",\"done\":"
                + done
                + ",\"records\":"
                + ImportCounters.records.get()
                + ",\"dead_letters\":"
                + ImportCounters.deadLetters.get()
                + ",\"already_present\":"
                + ImportCounters.alreadyPresent.get()
                + ",\"framing\":"
                + ImportCounters.framing.get()
                + ",\"files\":"
                + ImportCounters.filesDone.get()
                + ",\"seconds\":"
                + String.format(java.util.Locale.ROOT, "%.1f", seconds)
                + ",\"dead_letter_stages\":"
                + json(ImportCounters.stages())
                + ",\"dead_letter_reasons\":"
                + json(ImportCounters.reasons())
                + "}";
    }

    private static String json(Map<String, Long> counts) {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, Long> c : counts.entrySet()) {
            if (out.length() > 1) out.append(',');
            out.append(FileRecords.quote(c.getKey())).append(':').append(c.getValue());
        }
        return out.append('}').toString();
    }

    /**
     * A line on stderr every few seconds: bytes read of the files' total, records, rate, time left.
     */
    private static final class Progress {
        private final String server;
        private final long totalBytes;
        private final long started;
        private long lastPrint;

        Progress(String server, long totalBytes, long started) {
            this.server = server;
            this.totalBytes = totalBytes;
            this.started = started;
            this.lastPrint = started;
        }

        synchronized void maybePrint(boolean last) {
            long now = System.nanoTime();
            if (!last && now - lastPrint < 5_000_000_000L) return;
            lastPrint = now;
            double seconds = Math.max((now - started) / 1e9, 1e-3);
            long bytes = ImportCounters.bytesRead.get();
            long records = ImportCounters.records.get();
            if (!last && bytes == 0) { // the files' times first (TimeFloors)
                double scanned =
                        totalBytes == 0
                                ? 1
                                : Math.min(
                                        1.0,
                                        (double) ImportCounters.bytesScanned.get() / totalBytes);
                System.err.printf(
                        java.util.Locale.ROOT,
                        "import %s: %.0f%% of %s read for the records' times%n",
                        server,
                        scanned * 100,
                        size(totalBytes));
                return;
            }
            double share = totalBytes == 0 ? 1 : Math.min(1.0, (double) bytes / totalBytes);
            String eta =
                    share <= 0 || last
                            ? ""
                            : String.format(
                                    java.util.Locale.ROOT,
                                    ", about %s left",
                                    duration((long) (seconds / share - seconds)));
            System.err.printf(
                    java.util.Locale.ROOT,
                    "import %s: %.0f%% of %s read, %,d records (%,.0f/s)%s%n",
                    server,
                    share * 100,
                    size(totalBytes),
                    records,
                    records / seconds,
                    eta);
        }

        private static String duration(long s) {
            return s >= 3600
                    ? String.format("%dh%02dm", s / 3600, s % 3600 / 60)
                    : s >= 60 ? String.format("%dm%02ds", s / 60, s % 60) : s + "s";
        }

        private static String size(long b) {
            return b >= 1 << 30
                    ? String.format(java.util.Locale.ROOT, "%.1f GiB", b / (double) (1 << 30))
                    : b >= 1 << 20
                            ? String.format(
                                    java.util.Locale.ROOT, "%.1f MiB", b / (double) (1 << 20))
                            : String.format(java.util.Locale.ROOT, "%.1f KiB", b / 1024.0);
        }
    }

    private static void fail(int code, String message) {
        System.err.println(message);
        System.exit(code);
    }
}
