package io.auditpipe.bench;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.flink.AuditPipeline;
import io.auditpipe.flink.PipelineSinks;
import io.auditpipe.flink.PipelineSources;
import io.auditpipe.flink.archive.EventArchive;
import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.flink.stream.StreamFormat;
import io.auditpipe.flink.stream.StreamMessage;
import io.auditpipe.flink.stream.StreamMessages;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * The Flink job alone: the real job graph (Kafka source with parsing, normalization, the one-minute
 * stats windows) over a pre-filled, bounded topic, with sinks that only count. Prints events/s and
 * events/s per core. Used by bench/pipeline_bench.py; not a test.
 *
 * <p>Arguments: bootstrap servers, topic, parallelism, and how many passes over the topic (default
 * 1) in this one JVM; the figures are the last pass's. A fresh JVM spends much of a first pass in
 * the JIT compiler (in one run of 500,000 events its compiler threads logged 20 s of compilation
 * against the run's 14 s on two cores), so one pass measures a cold start, not the steady state a
 * busy server meets: the bench runs two and prints both. {@code job_alone_window} is the last
 * pass's span (UTC), for reading only its samples from a flight recording. The state backend is the
 * job's (RocksDB), unless the system property {@code auditpipe.bench.state-backend} names another;
 * {@code -Dauditpipe.bench.flink.<setting>=<value>} sets any other Flink setting, to compare two;
 * {@code -Dauditpipe.bench.alerts=shared} runs the alert rules on the store path's events instead
 * of a reading of their own ({@link PipelineSources#sharedWithAlerts}), the design the job compares
 * itself with; {@code -Dauditpipe.bench.sessions=off} leaves the sessions out, to see what building
 * them costs, and {@code -Dauditpipe.bench.baselines=off} the learned baselines, {@code
 * -Dauditpipe.bench.link-macs=off} the links' MACs; {@code
 * -Dauditpipe.bench.stream=auditpipe,ocsf,ecs} adds the event stream's messages in those formats
 * (docs/stream.md), made and discarded; {@code -Dauditpipe.bench.archive=DIR} adds the archive
 * (Parquet per server and day) written under DIR; {@code -Dauditpipe.bench.job-properties=FILE}
 * takes the job's options from a stack's job.properties (its compliance settings, thresholds and
 * baselines) instead of the defaults.
 */
public final class JobThroughputBenchmark {
    static final AtomicLong EVENTS = new AtomicLong();
    static final AtomicLong STATS = new AtomicLong();
    static final AtomicLong DEAD = new AtomicLong();
    static final AtomicLong FIRST_EVENT_NANOS = new AtomicLong(Long.MAX_VALUE);
    static final AtomicLong LAST_EVENT_NANOS = new AtomicLong();

    /** The JVM's CPU time (all its threads) when the pass's first event reached the sink. */
    static final AtomicLong CPU_AT_FIRST_EVENT_NANOS = new AtomicLong(-1);

    private JobThroughputBenchmark() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int parallelism = Integer.parseInt(args[2]);
        int passes = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        for (int pass = 1; pass <= passes; pass++) {
            EVENTS.set(0);
            STATS.set(0);
            DEAD.set(0);
            FIRST_EVENT_NANOS.set(Long.MAX_VALUE);
            LAST_EVENT_NANOS.set(0);
            CPU_AT_FIRST_EVENT_NANOS.set(-1);
            String begin = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            double withStartup = runOnce(bootstrap, topic, parallelism);
            // the JVM's CPU from the first event to the job's end (its teardown, a fraction of a
            // second, in it)
            double cpuUs = (processCpuNanos() - CPU_AT_FIRST_EVENT_NANOS.get()) / 1e3;
            // the processing rate: first to last event through the pipeline, without job startup
            // and teardown
            double seconds = (LAST_EVENT_NANOS.get() - FIRST_EVENT_NANOS.get()) / 1e9;
            long events = EVENTS.get();
            int cores = Runtime.getRuntime().availableProcessors();
            if (pass < passes) {
                System.out.printf("job_alone_pass_%d_events_per_s=%.0f%n", pass, events / seconds);
                continue;
            }
            String end = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
            System.out.printf(
                    "job_alone_events=%d%njob_alone_seconds=%.2f%njob_alone_events_per_s=%.0f%n"
                            + "job_alone_events_per_s_per_core=%.0f%njob_alone_cores=%d%njob_alone_stats_rows=%d%n"
                            + "job_alone_dead_letters=%d%njob_alone_seconds_with_startup=%.2f%n"
                            + "job_alone_window=%s/%s%njob_alone_cpu_us_per_event=%.2f%n",
                    events,
                    seconds,
                    events / seconds,
                    events / seconds / cores,
                    cores,
                    STATS.get(),
                    DEAD.get(),
                    withStartup,
                    begin.substring(0, 19),
                    end.substring(0, 19),
                    cpuUs / events);
        }
    }

    /**
     * One run of the job over the whole topic (a new consumer group: from the first record);
     * seconds with startup.
     */
    private static double runOnce(String bootstrap, String topic, int parallelism)
            throws Exception {
        // -Dauditpipe.bench.job-properties=FILE: the options of a stack's job (its compliance
        // settings, thresholds, baselines), as `auditpipe up` writes them; the default options
        // otherwise
        Map<String, String> entries = new java.util.TreeMap<>();
        String properties = System.getProperty("auditpipe.bench.job-properties", "");
        if (!properties.isEmpty()) {
            java.util.Properties p = new java.util.Properties();
            try (java.io.Reader in =
                    java.nio.file.Files.newBufferedReader(java.nio.file.Path.of(properties))) {
                p.load(in);
            }
            for (String k : p.stringPropertyNames()) {
                if (!k.startsWith("flink.")) entries.put(k, p.getProperty(k));
            }
        }
        // -Dauditpipe.bench.link-macs=off: the links without their MAC (no chain.link-key-file), to
        // see what it costs
        if ("off".equals(System.getProperty("auditpipe.bench.link-macs", "on")))
            entries.remove("chain.link-key-file");
        entries.put("kafka.bootstrap-servers", bootstrap);
        entries.put("store.uri", "mongodb://unused/");
        entries.put("kafka.topic.raw", topic);
        Configuration options = JobOptions.load(entries, "benchmark").job;
        // -Dauditpipe.bench.baselines=off: without the learned baselines (unseeded here: no store),
        // to see what they cost
        if ("off".equals(System.getProperty("auditpipe.bench.baselines", "on")))
            options.set(JobOptions.BASELINES_ENABLED, false);
        String group = "auditpipe-bench-" + System.nanoTime();
        KafkaSource<ParsedRecord> source =
                KafkaSource.<ParsedRecord>builder()
                        .setBootstrapServers(bootstrap)
                        .setTopics(topic)
                        .setGroupId(group)
                        .setStartingOffsets(OffsetsInitializer.earliest())
                        .setBounded(OffsetsInitializer.latest())
                        .setDeserializer(new AuditRecordDeserializer())
                        .build();
        // the alert rules read the topic on their own, as in the job that runs (AuditPipeline)
        KafkaSource<ParsedRecord> alertSource =
                KafkaSource.<ParsedRecord>builder()
                        .setBootstrapServers(bootstrap)
                        .setTopics(topic)
                        .setGroupId(group)
                        .setClientIdPrefix(group + "-alerts")
                        .setStartingOffsets(OffsetsInitializer.earliest())
                        .setBounded(OffsetsInitializer.latest())
                        .setDeserializer(
                                AuditRecordDeserializer.forAlerts(
                                        AuditRecordDeserializer.DEFAULT_MAX_AHEAD,
                                        ComplianceSettings.defaults()))
                        .build();
        // the job's state backend, its compaction and the local stack's managed memory for it
        // (stack/flink/job_settings.py); -Dauditpipe.bench.state-backend=hashmap measures the heap
        // backend instead
        Configuration flink = new Configuration();
        flink.setString(
                "state.backend.type",
                System.getProperty("auditpipe.bench.state-backend", "rocksdb"));
        flink.setString("taskmanager.memory.managed.size", "256m");
        flink.setString("state.backend.rocksdb.compaction.style", "UNIVERSAL");
        flink.setString(
                "state.backend.rocksdb.options-factory",
                io.auditpipe.flink.state.RocksDbFiles.class.getName());
        for (String name :
                System.getProperties()
                        .stringPropertyNames()) { // -Dauditpipe.bench.flink.<setting>=<value>
            if (name.startsWith("auditpipe.bench.flink.")) {
                flink.setString(
                        name.substring("auditpipe.bench.flink.".length()),
                        System.getProperty(name));
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(flink);
        env.setParallelism(parallelism);
        long start = System.nanoTime();
        // -Dauditpipe.bench.alerts=shared: the rules read the store path's events instead
        // (PipelineSources)
        PipelineSources sources =
                "shared".equals(System.getProperty("auditpipe.bench.alerts", "own"))
                        ? PipelineSources.sharedWithAlerts(source)
                        : new PipelineSources(source, alertSource);
        PipelineSinks.Builder sinks =
                PipelineSinks.builder()
                        .events(new Counting<IngestedEvent>(0))
                        .evidence(new DiscardingSink<>())
                        .stats(new Counting<StatsRow>(1))
                        .statsHourly(new DiscardingSink<>())
                        .rollups(new DiscardingSink<>())
                        .deadLetters(new Counting<DeadLetter>(2))
                        .alerts(new DiscardingSink<>())
                        .chainHeads(new DiscardingSink<>());
        // -Dauditpipe.bench.sessions=off: without the sessions (the live job builds them), to see
        // what they cost
        if (!"off".equals(System.getProperty("auditpipe.bench.sessions", "on")))
            sinks.sessions(new DiscardingSink<>());
        // -Dauditpipe.bench.stream=<formats>: with the event stream's messages in those formats
        // (their projection and JSON), into discarding sinks: what making them costs; the Kafka
        // transactions are the end-to-end run's
        List<StreamFormat> stream =
                StreamFormat.parse(System.getProperty("auditpipe.bench.stream", ""));
        if (!stream.isEmpty()) {
            Map<StreamFormat, String> topics = new EnumMap<>(StreamFormat.class);
            for (StreamFormat f : StreamFormat.values()) topics.put(f, "bench." + f.id);
            sinks.stream(
                    new StreamMessages.Settings(stream, topics, "bench"),
                    name -> new DiscardingSink<StreamMessage>());
        }
        // -Dauditpipe.bench.archive=DIR: with the archive's Parquet files written under DIR, as the
        // job writes them
        String archive = System.getProperty("auditpipe.bench.archive", "");
        if (!archive.isEmpty() && !"off".equals(archive)) {
            String base = java.nio.file.Path.of(archive).resolve(group).toUri().toString();
            sinks.archive(EventArchive.events(base), EventArchive.chainHeads(base));
        }
        new AuditPipeline(options, sources, sinks.build()).execute(env);
        return (System.nanoTime() - start) / 1e9;
    }

    /** The CPU time this JVM's threads have used, in nanoseconds. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** Counts what reaches it (in this JVM: the MiniCluster runs here). */
    static final class Counting<T> implements Sink<T> {
        private static final long serialVersionUID = 1L;
        private final int which;

        Counting(int which) {
            this.which = which;
        }

        @Override
        public SinkWriter<T> createWriter(WriterInitContext context) {
            AtomicLong counter = which == 0 ? EVENTS : which == 1 ? STATS : DEAD;
            return new SinkWriter<>() {
                @Override
                public void write(T element, Context ctx) {
                    counter.incrementAndGet();
                    if (which == 0) {
                        long now = System.nanoTime();
                        if (CPU_AT_FIRST_EVENT_NANOS.get() < 0)
                            CPU_AT_FIRST_EVENT_NANOS.compareAndSet(-1, processCpuNanos());
                        FIRST_EVENT_NANOS.accumulateAndGet(now, Math::min);
                        LAST_EVENT_NANOS.accumulateAndGet(now, Math::max);
                    }
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
