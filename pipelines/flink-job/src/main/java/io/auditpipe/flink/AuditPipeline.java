package io.auditpipe.flink;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.flink.alerts.AlertInputs;
import io.auditpipe.flink.alerts.AlertSettings;
import io.auditpipe.flink.alerts.AlertsOnce;
import io.auditpipe.flink.alerts.EventRules;
import io.auditpipe.flink.alerts.FailedLoginsPerAccount;
import io.auditpipe.flink.alerts.FailedLoginsPerOrigin;
import io.auditpipe.flink.alerts.RecordGaps;
import io.auditpipe.flink.alerts.SequenceStarts;
import io.auditpipe.flink.alerts.UnauthorizedAccess;
import io.auditpipe.flink.baselines.BaselineEvent;
import io.auditpipe.flink.baselines.BaselineSettings;
import io.auditpipe.flink.baselines.PrincipalBaselines;
import io.auditpipe.flink.baselines.ProfileSeeds;
import io.auditpipe.flink.chain.ChainEvents;
import io.auditpipe.flink.chain.ChainHead;
import io.auditpipe.flink.chain.ChainKeys;
import io.auditpipe.flink.functions.CountEvents;
import io.auditpipe.flink.functions.EmitCountRow;
import io.auditpipe.flink.functions.HourlyCounts;
import io.auditpipe.flink.functions.IsEvidence;
import io.auditpipe.flink.functions.PreCountStats;
import io.auditpipe.flink.functions.SplitDeadLetters;
import io.auditpipe.flink.functions.StatsKeySelector;
import io.auditpipe.flink.functions.TooLateForStats;
import io.auditpipe.flink.functions.WriteBackOperator;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.flink.records.RollupKey;
import io.auditpipe.flink.records.RollupRow;
import io.auditpipe.flink.records.StatsEvent;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.flink.sessions.Session;
import io.auditpipe.flink.sessions.SessionBuilder;
import io.auditpipe.flink.sessions.SessionEvent;
import io.auditpipe.flink.stream.StreamMessage;
import io.auditpipe.flink.stream.StreamMessages;
import io.auditpipe.parser.AuditEvent;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.OutputTag;

/**
 * The pipeline's graph, over the sources and sinks it is given ({@link PipelineSources}, {@link
 * PipelineSinks}); {@link JobWiring} makes the real ones, tests and benchmarks pass bounded and
 * collecting ones (the structure of apache/flink-training).
 *
 * <pre>
 * records --SplitDeadLetters--> events
 *   |        \--> keyBy(server): first copy only, linked into the server's chain
 *   |             |--> events sink (the capped collection, insert by deterministic _id)
 *   |             |--> the evidence kinds only --> evidence sink (uncapped, the same documents)
 *   |             |--> archive: Parquet per server and day (FileSink, exactly once)
 *   |             |--> keyBy(server,user,event,class,status)
 *   |             |      1-minute event-time windows --> stats sink (upsert full count)
 *   |             |--> control and administrator events, keyBy(server,user,class,category,action,controls)
 *   |             |      1-day event-time windows --> rollups sink (upsert full count)
 *   |             |--> keyBy(server,connection): sessions --> sessions sink (upsert)
 *   |             |--> keyBy(server,user): learned baselines --> alert sinks (writers of their own)
 *   |             \--> chain heads (each head interval) --> chain heads sink, archive manifest,
 *   |                  servers (last event per server), the Kafka lag sampler
 *   \--> dead letters (+ id collisions, events too late for the stats) --> dead letters sinks
 *
 * records, read again --> alert rules: logins per account and per origin, access to classified data,
 *                         per-event rules, record gaps --> each alert id once --> alert sinks
 * </pre>
 *
 * <p>Imported history ({@link PipelineSources#history}, {@code auditpipe import}) runs the same
 * graph over a bounded source without the events sink, the sessions and the alert rules: its events
 * are linked in a chain of their own and counted in stats and rollup documents of their own (the
 * run's name in their ids), beside the live job's. What differs between the two is one value,
 * {@link Reading}, made from the sources.
 *
 * <p><b>Why the alert rules read the records a second time.</b> The store path goes as fast as the
 * store takes its writes; when it falls behind (a server writing faster than the store stores),
 * Flink's back-pressure slows the source, and every record read by that source subtask waits, the
 * failed logins of another server with it. Read by a source of their own, the rules keep up with
 * the topic (reading is far faster than storing), whatever the store does; the alerts' store writer
 * is a task of its own, so a store that stops answering does not hold back the topic and the
 * webhook (bench/README.md: alert latency). The price: each record is fetched and read twice, and
 * the rules see the copies a collector re-sends, which {@link AlertsOnce} keeps from raising an
 * alert twice. The learned baselines are the exception: they count a principal's records, which
 * only the first copies count exactly, so they learn on the store path and wait with it.
 *
 * <p>Every operator has a name and a stable uid, so checkpoints survive changes to the code.
 */
public final class AuditPipeline {
    /**
     * The stats' window; also how long the chain remembers an id past its minute (with the
     * lateness).
     */
    public static final Duration STATS_WINDOW = Duration.ofMinutes(1);

    /** Sums of (stats key, minute) one pre-counting subtask holds at most before it sends them. */
    static final int PRE_COUNT_MAX_KEYS = 10_000;

    /**
     * Events too late for their minute's count (past stats.allowed-lateness): dead letters of stage
     * "stats".
     */
    public static final OutputTag<StatsEvent> TOO_LATE_FOR_STATS =
            new OutputTag<>("too-late-for-stats") {};

    /*
     * How long a partly filled network buffer waits before it is sent, per operator (it applies to every
     * output of the operator that crosses to another task). Each output with a wait has a thread that
     * wakes at that interval, idle or not: with Flink's default of 100 ms everywhere, 58 of them took
     * 1.6-3.9% of a core in a stack where nothing happened (bench/README.md, "Idle"). So:
     * - the paths an event's or an alert's latency is promised on keep the default: the records to the
     *   chain, to the alert rules and to the learned baselines;
     * - the alerts themselves go at once ({@link #ALERTS_BUFFER_TIMEOUT_MS}): they are few next to the
     *   events, so a buffer each costs little, no thread wakes for them, and an alert crosses its
     *   two hands-over (the rules to each-alert-once, that to the store's writer) without waiting;
     * - what no latency is promised on, and what waits for a window or a checkpoint anyway, waits up
     *   to a second ({@link #UNHURRIED_BUFFER_TIMEOUT_MS}): the counts, the sessions, the lag, an
     *   import's archive, and the dead letters of the chain and the counts.
     */
    static final long ALERTS_BUFFER_TIMEOUT_MS = 0;
    static final long UNHURRIED_BUFFER_TIMEOUT_MS = 1000;

    private final Configuration options;
    private final PipelineSources sources;
    private final PipelineSinks sinks;

    /** Live or imported history: what the graph does differently for the two. */
    private final Reading reading;

    /** The job's state backend iterates a map in key order (RocksDB: docs/scaling.md "State"). */
    private boolean sortedState;

    public AuditPipeline(Configuration options, PipelineSources sources, PipelineSinks sinks) {
        this.options = Objects.requireNonNull(options, "options");
        this.sources = Objects.requireNonNull(sources, "sources");
        this.sinks = Objects.requireNonNull(sinks, "sinks");
        this.reading = Reading.of(sources, options);
    }

    public JobExecutionResult execute(StreamExecutionEnvironment env) throws Exception {
        build(env);
        return env.execute(options.get(JobOptions.JOB_NAME));
    }

    /** Adds the pipeline's operators to {@code env}. */
    public void build(StreamExecutionEnvironment env) {
        // Chained operators get the record itself, not a deep copy each: no function changes a
        // record after emitting it or keeps one it received across calls (records that cross a
        // shuffle are deserialized fresh; state holds what functions build). Copying every event
        // field by field once per chained operator was the job's largest single cost (profiled
        // 2026-11-24).
        env.getConfig().enableObjectReuse();
        sortedState =
                "rocksdb"
                        .equalsIgnoreCase(
                                env.getConfiguration().get(StateBackendOptions.STATE_BACKEND));
        WatermarkStrategy<ParsedRecord> watermarks = reading.watermarks();
        SingleOutputStreamOperator<ParsedRecord> read =
                reading.withTheReader(
                        env.fromSource(sources.records(), watermarks, "audit-raw-source")
                                .uid("audit-raw-source"));
        SingleOutputStreamOperator<IngestedEvent> events =
                reading.withTheReader(
                        read.process(new SplitDeadLetters())
                                .name("split-dead-letters")
                                .uid("split-dead-letters"));
        SingleOutputStreamOperator<IngestedEvent> firstCopies = storedEvents(events);
        SingleOutputStreamOperator<StatsRow> stats = stats(firstCopies);
        rollups(firstCopies);
        sessions(firstCopies);
        baselines(firstCopies);
        sources.recordsForAlerts()
                .ifPresent(
                        forAlerts -> {
                            DataStream<ParsedRecord> records =
                                    env.fromSource(
                                                    forAlerts,
                                                    watermarks,
                                                    "audit-raw-source-for-alerts")
                                            .uid("audit-raw-source-for-alerts");
                            alerts(
                                    records.flatMap(new AlertInputs.EventsOfRecords())
                                            .name("events-for-alerts")
                                            .uid("events-for-alerts"),
                                    records.flatMap(new AlertInputs.DeadLetteredNumbersOfRecords())
                                            .name("dead-lettered-numbers")
                                            .uid("dead-lettered-numbers"));
                        });
        if (sources.alertsShareRecords()) {
            alerts(
                    events.map(e -> e.event, TypeInformation.of(AuditEvent.class))
                            .name("events-for-alerts")
                            .uid("events-for-alerts"),
                    events.getSideOutput(SplitDeadLetters.DEAD_LETTERS)
                            .flatMap(new AlertInputs.DeadLetteredNumbers())
                            .name("dead-lettered-numbers")
                            .uid("dead-lettered-numbers"));
        }
        deadLetters(
                events.getSideOutput(SplitDeadLetters.DEAD_LETTERS)
                        .union(firstCopies.getSideOutput(ChainEvents.COLLISIONS))
                        .union(
                                stats.getSideOutput(TOO_LATE_FOR_STATS)
                                        .map(new TooLateForStats())
                                        .name("too-late-for-stats")
                                        .uid("too-late-for-stats")
                                        .setBufferTimeout(UNHURRIED_BUFFER_TIMEOUT_MS)));
    }

    /**
     * The chain's key files, checked here, where the job is built, so that a bad one stops it with
     * its reason.
     */
    private ChainKeys chainKeys() {
        return new ChainKeys(
                        options.getOptional(JobOptions.CHAIN_SIGNING_KEY_FILE).orElse(null),
                        options.getOptional(JobOptions.CHAIN_LINK_KEY_FILE).orElse(null))
                .checked();
    }

    /**
     * The first copy of each event, linked into its server's chain, to the store and the archive;
     * the chain's heads.
     */
    private SingleOutputStreamOperator<IngestedEvent> storedEvents(
            DataStream<IngestedEvent> events) {
        SingleOutputStreamOperator<IngestedEvent> firstCopies =
                reading.byServer(events)
                        .transform(
                                "first-copies-in-chain",
                                TypeInformation.of(IngestedEvent.class),
                                new WriteBackOperator<>(
                                        new ChainEvents(
                                                STATS_WINDOW,
                                                options.get(JobOptions.STATS_ALLOWED_LATENESS),
                                                options.get(JobOptions.CHAIN_HEAD_INTERVAL),
                                                reading.chain(),
                                                chainKeys(),
                                                sortedState)))
                        .uid("first-copies-in-chain")
                        .setBufferTimeout(
                                // its own outputs: the lag, the collisions (an import's archive)
                                UNHURRIED_BUFFER_TIMEOUT_MS);
        reading.withTheReader(firstCopies);
        sinks.events()
                .ifPresent(s -> firstCopies.sinkTo(s).name("store-events").uid("store-events"));
        sinks.stream()
                .ifPresent(
                        stream ->
                                firstCopies
                                        .flatMap(
                                                new StreamMessages.OfEvents(stream.settings()),
                                                TypeInformation.of(StreamMessage.class))
                                        .name("stream-event-messages")
                                        .uid("stream-event-messages")
                                        .sinkTo(stream.sinkFor().apply("events"))
                                        .name("stream-events")
                                        .uid("stream-events"));
        firstCopies
                .filter(new IsEvidence())
                .name("evidence-kinds")
                .uid("evidence-kinds")
                .sinkTo(sinks.evidence())
                .name("store-evidence")
                .uid("store-evidence");
        DataStream<ChainHead> heads = firstCopies.getSideOutput(ChainEvents.HEADS);
        heads.sinkTo(sinks.chainHeads()).name("store-chain-heads").uid("store-chain-heads");
        sinks.servers().ifPresent(s -> heads.sinkTo(s).name("store-servers").uid("store-servers"));
        sinks.kafkaLag()
                .ifPresent(
                        s -> heads.sinkTo(s).setParallelism(1).name("kafka-lag").uid("kafka-lag"));
        sinks.archive()
                .ifPresent(
                        archive -> {
                            reading.archiveThread(
                                    firstCopies
                                            .sinkTo(archive.events())
                                            .name("archive-events")
                                            .uid("archive-events"));
                            heads.sinkTo(archive.chainHeads())
                                    .name("archive-chain-heads")
                                    .uid("archive-chain-heads");
                        });
        return firstCopies;
    }

    /**
     * Each connection's session from the stored events (their first copies: each record once),
     * upserted as it goes.
     */
    private void sessions(DataStream<IngestedEvent> firstCopies) {
        sinks.sessions()
                .ifPresent(
                        sink ->
                                firstCopies
                                        .flatMap(
                                                (IngestedEvent ie,
                                                        org.apache.flink.util.Collector<
                                                                        SessionEvent>
                                                                out) -> {
                                                    SessionEvent e = SessionEvent.of(ie.event);
                                                    if (e != null) out.collect(e);
                                                },
                                                TypeInformation.of(SessionEvent.class))
                                        .name("session-fields")
                                        .uid("session-fields")
                                        .setBufferTimeout(UNHURRIED_BUFFER_TIMEOUT_MS)
                                        .keyBy(SessionEvent::key)
                                        .transform(
                                                "sessions",
                                                TypeInformation.of(Session.class),
                                                new WriteBackOperator<>(
                                                        new SessionBuilder(
                                                                options.get(
                                                                                JobOptions
                                                                                        .SESSIONS_IDLE_TIMEOUT)
                                                                        .toMillis(),
                                                                options.get(
                                                                                JobOptions
                                                                                        .SESSIONS_REFRESH)
                                                                        .toMillis(),
                                                                options.get(
                                                                        JobOptions
                                                                                .SESSIONS_MAX_TABLES))))
                                        .uid("sessions")
                                        .sinkTo(sink)
                                        .name("store-sessions")
                                        .uid("store-sessions"));
    }

    /**
     * Each principal's learned baseline from the stored events (first copies: each record counted
     * once) and the alerts raised against it (docs/alerts.md "Learned baselines"), to the alert
     * sinks through writers of their own: joined with the rules' alerts, these (from the store
     * path) would hold the rules' back at each checkpoint's barrier alignment while the store is
     * slow. Imported history learns the same baselines without judging and writes them to the store
     * at its end, where the live job finds the seed of a principal it has no state of.
     */
    private void baselines(DataStream<IngestedEvent> firstCopies) {
        boolean history = reading.learnsOnly();
        Optional<PipelineSinks.Baselines> stored = sinks.baselines();
        if (!options.get(JobOptions.BASELINES_ENABLED)
                || (history ? stored.isEmpty() : sinks.alerts().isEmpty())) return;
        ComplianceSettings compliance = JobOptions.compliance(options);
        BaselineSettings settings = BaselineSettings.fromOptions(options, compliance);
        ProfileSeeds seeds = stored.map(PipelineSinks.Baselines::seeds).orElse(null);
        SingleOutputStreamOperator<Alert> alerts =
                firstCopies
                        .flatMap(
                                (IngestedEvent ie,
                                        org.apache.flink.util.Collector<BaselineEvent> out) -> {
                                    // a record whose own time is far ahead of its arrival would
                                    // teach a principal an hour, or end its learning, from a clock
                                    // that is wrong: stored, not learned
                                    if (!ie.eventTimeTrusted) return;
                                    BaselineEvent e = BaselineEvent.of(ie.event, compliance);
                                    if (e != null) out.collect(e);
                                },
                                TypeInformation.of(BaselineEvent.class))
                        .name("baseline-fields")
                        .uid("baseline-fields")
                        .keyBy(BaselineEvent::key)
                        .transform(
                                "alert-learned-baselines",
                                TypeInformation.of(Alert.class),
                                new WriteBackOperator<>(reading.baselines(settings, seeds)))
                        .uid("alert-learned-baselines")
                        .setBufferTimeout(ALERTS_BUFFER_TIMEOUT_MS);
        if (history) {
            alerts.getSideOutput(PrincipalBaselines.PROFILES)
                    .sinkTo(stored.get().profiles())
                    .name("store-baselines")
                    .uid("store-baselines");
            return;
        }
        alertSinks(alerts, "learned-alerts");
    }

    /**
     * One-minute event-time counts of the stored events, written early and updated by late events,
     * and each server's hours summed from them. Imported history writes only the hours: a quarter
     * spread thin has about one minute row per event, which the local store cannot read back in
     * time for a panel (docs/archive.md "Imported history").
     */
    private SingleOutputStreamOperator<StatsRow> stats(DataStream<IngestedEvent> firstCopies) {
        SingleOutputStreamOperator<StatsRow> stats =
                reading.windowed(
                                firstCopies
                                        .map(StatsEvent::of, TypeInformation.of(StatsEvent.class))
                                        .name("stats-fields")
                                        .uid("stats-fields") // a few fields cross the shuffle
                                        .transform(
                                                "stats-pre-count",
                                                TypeInformation.of(StatsEvent.class),
                                                new PreCountStats(
                                                        STATS_WINDOW,
                                                        reading.statsLateness(),
                                                        PRE_COUNT_MAX_KEYS))
                                        .uid("stats-pre-count")
                                        .setBufferTimeout(UNHURRIED_BUFFER_TIMEOUT_MS)
                                        .keyBy(new StatsKeySelector())
                                        .window(TumblingEventTimeWindows.of(STATS_WINDOW)))
                        .sideOutputLateData(TOO_LATE_FOR_STATS)
                        .aggregate(new CountEvents.OfStats(), EmitCountRow.stats(reading.chain()))
                        .name("stats-1m")
                        .uid("stats-1m")
                        .setBufferTimeout(UNHURRIED_BUFFER_TIMEOUT_MS);
        sinks.stats().ifPresent(s -> stats.sinkTo(s).name("store-stats").uid("store-stats"));
        stats.keyBy(HourlyCounts.KEY, Types.STRING)
                .process(reading.hourlyCounts())
                .name("stats-1h")
                .uid("stats-1h")
                .sinkTo(sinks.statsHourly())
                .name("store-stats-hourly")
                .uid("store-stats-hourly");
        return stats;
    }

    /**
     * Daily counts of the events a review counts over its whole period (those evidencing a control,
     * and what administrators do), by server, user, principal class, category, action and controls:
     * a UTC day's event-time window, written early and updated by late events like the stats. An
     * event too late for its day is too late for its minute too (a day ends no earlier than its
     * last minute), so the stats' dead letter already names it; the window drops it without a
     * second one.
     */
    private void rollups(DataStream<IngestedEvent> firstCopies) {
        reading.windowed(
                        firstCopies
                                .filter(e -> RollupKey.counts(e.event))
                                .name("rollup-events")
                                .uid("rollup-events")
                                .map(RollupKey::of, TypeInformation.of(RollupKey.class))
                                .name("rollup-fields")
                                .uid("rollup-fields")
                                .setBufferTimeout(UNHURRIED_BUFFER_TIMEOUT_MS)
                                .keyBy(new RollupKey.Itself())
                                .window(TumblingEventTimeWindows.of(RollupRow.WINDOW)))
                .aggregate(new CountEvents<>(), EmitCountRow.rollups(reading.chain()))
                .name("rollups-1d")
                .uid("rollups-1d")
                .sinkTo(sinks.rollups())
                .name("store-rollups")
                .uid("store-rollups");
    }

    /**
     * The alert rules (docs/alerts.md) over every event the alert source reads, each alert id once,
     * and the alerts' sinks; {@code deadLettered}: the numbers of Percona records whose lines
     * became dead letters, which the gap rule classifies by.
     */
    private void alerts(
            DataStream<AuditEvent> enriched, DataStream<RecordGaps.Numbered> deadLettered) {
        AlertSettings settings = AlertSettings.fromOptions(options);
        DataStream<AuditEvent> logins =
                enriched.filter(new AlertInputs.IsLogin()).name("logins").uid("logins");
        DataStream<Alert> perAccount =
                rule(
                        logins.keyBy(new AlertInputs.ServerAndUser()),
                        new FailedLoginsPerAccount(settings),
                        "alert-logins-per-account");
        DataStream<Alert> perOrigin =
                rule(
                        logins.filter(new AlertInputs.IsFailedLoginWithOrigin())
                                .name("failed-logins-with-origin")
                                .uid("failed-logins-with-origin")
                                .keyBy(new AlertInputs.ServerAndOrigin()),
                        new FailedLoginsPerOrigin(settings),
                        "alert-logins-per-origin");
        DataStream<Alert> unauthorized =
                rule(
                        enriched.flatMap(new AlertInputs.ViolationsPerClass())
                                .name("access-violations")
                                .uid("access-violations")
                                .keyBy(new AlertInputs.ServerUserAndClass()),
                        new UnauthorizedAccess(settings),
                        "alert-unauthorized-access");
        DataStream<Alert> perEvent =
                enriched.flatMap(new EventRules(settings))
                        .name("alert-event-rules")
                        .uid("alert-event-rules")
                        .setBufferTimeout(ALERTS_BUFFER_TIMEOUT_MS);
        SingleOutputStreamOperator<Alert> gaps =
                enriched.flatMap(new AlertInputs.NumberedRecords())
                        .name("records-in-a-sequence")
                        .uid("records-in-a-sequence")
                        .union(deadLettered)
                        .keyBy(new AlertInputs.RecordSequence())
                        .transform(
                                "alert-record-gaps",
                                TypeInformation.of(Alert.class),
                                new WriteBackOperator<>(new RecordGaps(settings)))
                        .uid("alert-record-gaps")
                        .setBufferTimeout(
                                // its alerts, and the notices of a sequence's start
                                ALERTS_BUFFER_TIMEOUT_MS);
        DataStream<Alert> starts =
                rule(
                        gaps.getSideOutput(RecordGaps.NOTICES)
                                .keyBy(new AlertInputs.NoticeServer()),
                        new SequenceStarts(),
                        "alert-sequence-starts");
        DataStream<Alert> alerts =
                perAccount
                        .union(perOrigin, unauthorized, perEvent, gaps, starts)
                        .keyBy(new AlertInputs.AlertId())
                        .process(new AlertsOnce())
                        .name("each-alert-once")
                        .uid("each-alert-once")
                        .setBufferTimeout(ALERTS_BUFFER_TIMEOUT_MS);
        alertSinks(alerts, "alerts");
    }

    /** A keyed alert rule's operator, named {@code name}, passing its alerts on at once. */
    private static <K, I> DataStream<Alert> rule(
            KeyedStream<I, K> input, KeyedProcessFunction<K, I, Alert> rule, String name) {
        return input.process(rule).name(name).uid(name).setBufferTimeout(ALERTS_BUFFER_TIMEOUT_MS);
    }

    /**
     * The alerts to the store (a task of its own: a store that stops answering holds back this
     * writer, not the topic's and the webhook's), the alerts topic, the webhook and the event
     * stream, each sink named after {@code name}.
     */
    private void alertSinks(DataStream<Alert> alerts, String name) {
        sinks.alerts()
                .ifPresent(
                        s ->
                                alerts.sinkTo(s)
                                        .name("store-" + name)
                                        .uid("store-" + name)
                                        .disableChaining());
        sinks.alertTopic()
                .ifPresent(s -> alerts.sinkTo(s).name("kafka-" + name).uid("kafka-" + name));
        sinks.alertWebhook()
                .ifPresent(s -> alerts.sinkTo(s).name("webhook-" + name).uid("webhook-" + name));
        streamAlerts(alerts, name);
    }

    /**
     * The alerts in the stream's formats that carry them (OCSF, ECS), through a transactional
     * writer of their own.
     */
    private void streamAlerts(DataStream<Alert> alerts, String name) {
        sinks.stream()
                .filter(stream -> stream.settings().streamsAlerts())
                .ifPresent(
                        stream ->
                                alerts.flatMap(
                                                new StreamMessages.OfAlerts(stream.settings()),
                                                TypeInformation.of(StreamMessage.class))
                                        .name("stream-" + name + "-messages")
                                        .uid("stream-" + name + "-messages")
                                        .sinkTo(stream.sinkFor().apply(name))
                                        .name("stream-" + name)
                                        .uid("stream-" + name));
    }

    private void deadLetters(DataStream<DeadLetter> deadLetters) {
        deadLetters
                .sinkTo(sinks.deadLetters())
                .name("store-dead-letters")
                .uid("store-dead-letters");
        sinks.deadLetterTopic()
                .ifPresent(
                        s ->
                                deadLetters
                                        .sinkTo(s)
                                        .name("kafka-dead-letters")
                                        .uid("kafka-dead-letters"));
    }
}
