package io.auditpipe.flink;

import io.auditpipe.flink.archive.EventArchive;
import io.auditpipe.flink.chain.ChainEvents;
import io.auditpipe.flink.chain.ChainHead;
import io.auditpipe.flink.lag.KafkaLagReporter;
import io.auditpipe.flink.chain.ServerOfEvent;
import io.auditpipe.flink.alerts.Alert;
import io.auditpipe.flink.alerts.AlertSettings;
import io.auditpipe.flink.alerts.AlertsOnce;
import io.auditpipe.flink.alerts.EventRules;
import io.auditpipe.flink.alerts.FailedLoginsPerAccount;
import io.auditpipe.flink.alerts.FailedLoginsPerOrigin;
import io.auditpipe.flink.alerts.RecordGaps;
import io.auditpipe.flink.alerts.UnauthorizedAccess;
import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.functions.CountEvents;
import io.auditpipe.flink.functions.EarlyFiringEventTimeTrigger;
import io.auditpipe.flink.functions.EmitStatsRow;
import io.auditpipe.flink.functions.SplitDeadLetters;
import io.auditpipe.flink.functions.StatsKeySelector;
import io.auditpipe.flink.functions.TooLateForStats;
import io.auditpipe.flink.functions.TrustedEventTimeWatermarks;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.flink.records.StatsEvent;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.flink.sink.DeadLetterKafkaSerializer;
import io.auditpipe.flink.sink.MongoBulkSink;
import io.auditpipe.flink.sink.MongoSinkSettings;
import io.auditpipe.flink.sink.StoreDocuments;

import io.auditpipe.flink.sink.AlertKafkaSerializer;
import io.auditpipe.flink.sink.WebhookSink;
import io.auditpipe.parser.AuditEvent;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.OutputTag;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.time.Duration;

/**
 * The auditpipe streaming job.
 *
 * <pre>
 * audit.raw (Kafka) --parse+normalize+enrich+mask--> events
 *                         |         \--> keyBy(server): first copy only, linked into the server's chain
 *                         |              |--> audit_events (capped, insert by deterministic _id)
 *                         |              |--> archive: Parquet per server and day (FileSink, exactly once)
 *                         |              |--> keyBy(server,user,event,class,status)
 *                         |              |      1-minute event-time windows --> audit_stats_1m (upsert full count)
 *                         |              \--> chain heads (each minute) --> chain_heads, archive manifest
 *                         |              \--> each chain head --> servers (last event per server)
 *                         \--> dead letters (+ id collisions, events too late for the stats) --> dead_letters, audit.deadletter
 *
 * audit.raw, read again --parse+normalize+enrich+mask--> events (dead letters: reported above)
 *                         --> alert rules: logins per account and per origin, access to classified data,
 *                             per-event rules, record gaps --> each alert id once --> alerts, audit.alerts, webhook
 * </pre>
 *
 * <p><b>Why the alert rules read the topic a second time.</b> The store path goes as fast as the store
 * takes its writes; when it falls behind (a server writing faster than the store stores), Flink's
 * back-pressure slows the source, and every record read by that source subtask waits, the failed
 * logins of another server with it: measured on 2 cores, alerts came 5-11 s late when the alerting
 * server's partition shared a source subtask with a server 10,000 events/s fast, and 27-44 s when it
 * shared its partition (bench/README.md). Read by a source of their own, the rules keep up with the
 * topic (parsing is far faster than storing), whatever the store does; the alerts' store writer is a
 * task of its own, so a store that stops answering does not hold back the topic and the webhook.
 * The price: each record is fetched and parsed twice (bench/README.md has the cost), and the rules
 * see the copies a collector re-sends, which {@link AlertsOnce} keeps from raising an alert twice
 * (the source for the rules skips what only the store keeps: {@link AuditRecordDeserializer#forAlerts}).
 * The alert source starts where the job's consumer group stands and commits nothing
 * (the group's committed offsets are the store path's, which `auditpipe status` reports as lag).
 *
 * Enrichment and masking happen in the source ({@link AuditRecordDeserializer}), before anything
 * else sees an event.
 *
 * Source and sinks come in through the constructor: {@link #main} wires Kafka and MongoDB, tests
 * pass bounded sources and collecting sinks (the structure of apache/flink-training). Every
 * operator has a name and a stable uid, so checkpoints survive changes to the code.
 */
public class AuditPipelineJob {
    static final Duration STATS_WINDOW = Duration.ofMinutes(1);
    /**
     * The events' store writer writes two batches at once (inserts by _id only: either order stores
     * the same). With one, the store wrote one batch while the next one waited; with two, it turns
     * one batch's documents into its own form while it writes the other: 8,853 events/s end to end
     * against 6,444 with one (bench/README.md, issue 11, eighth session; docs/store.md "insert
     * batches"). On FerretDB only: MongoDB trims capped collections in arrival order, and one batch
     * at a time keeps the chain's order there (docs/archive.md). Every other writer keeps one:
     * their upserts must apply in order.
     */
    static final int EVENT_BATCHES_IN_FLIGHT = 2;
    static final OutputTag<StatsEvent> TOO_LATE_FOR_STATS = new OutputTag<>("too-late-for-stats") {};

    private final Configuration options;
    private final Source<ParsedRecord, ?, ?> source;
    /** What the alert rules read (the same topic, a source of their own); by default {@link #source} read again. */
    private Source<ParsedRecord, ?, ?> alertSource;
    private final Sink<IngestedEvent> eventSink;
    private final Sink<StatsRow> statsSink;
    private final Sink<DeadLetter> deadLetterStoreSink;
    private final Sink<DeadLetter> deadLetterTopicSink;
    private Sink<Alert> alertStoreSink;
    private Sink<Alert> alertTopicSink;
    private Sink<Alert> alertWebhookSink;
    private Sink<ChainHead> chainHeadStoreSink;
    private Sink<ChainHead> serverStoreSink;
    private Sink<ChainHead> kafkaLagReporter;
    private Sink<IngestedEvent> archiveEventSink;
    private Sink<ChainHead> archiveChainHeadSink;

    public AuditPipelineJob(Configuration options, Source<ParsedRecord, ?, ?> source, Sink<IngestedEvent> eventSink,
                            Sink<StatsRow> statsSink, Sink<DeadLetter> deadLetterStoreSink,
                            Sink<DeadLetter> deadLetterTopicSink) {
        this.options = options;
        this.source = source;
        this.eventSink = eventSink;
        this.statsSink = statsSink;
        this.deadLetterStoreSink = deadLetterStoreSink;
        this.deadLetterTopicSink = deadLetterTopicSink;
    }

    /** The source the alert rules read: the same records as the job's source, read on their own. */
    public AuditPipelineJob withAlertSource(Source<ParsedRecord, ?, ?> alertSource) {
        this.alertSource = alertSource;
        return this;
    }

    /** Where alerts go: the store (null: discarded), the topic and the webhook (each null: none). */
    public AuditPipelineJob withAlertSinks(Sink<Alert> store, Sink<Alert> topic, Sink<Alert> webhook) {
        this.alertStoreSink = store;
        this.alertTopicSink = topic;
        this.alertWebhookSink = webhook;
        return this;
    }

    /** Where chain heads go in the store (null: discarded). */
    public AuditPipelineJob withChainHeadSink(Sink<ChainHead> store) {
        this.chainHeadStoreSink = store;
        return this;
    }

    /** Where each chain head updates its server's entry in the servers collection (null: none). */
    public AuditPipelineJob withServerSink(Sink<ChainHead> servers) {
        this.serverStoreSink = servers;
        return this;
    }

    /** Samples the job's consumer lag into the store (KafkaLagReporter; null: none). */
    public AuditPipelineJob withKafkaLagReporter(Sink<ChainHead> reporter) {
        this.kafkaLagReporter = reporter;
        return this;
    }

    /** The archive's sinks for events and chain heads (docs/archive.md); null: no archive. */
    public AuditPipelineJob withArchive(Sink<IngestedEvent> events, Sink<ChainHead> heads) {
        this.archiveEventSink = events;
        this.archiveChainHeadSink = heads;
        return this;
    }

    /** Adds the job's operators to {@code env}. */
    public void build(StreamExecutionEnvironment env) {
        // Chained operators get the record itself, not a deep copy each. Without it every event was
        // copied field by field (by reflection) once per operator chained after the chain's link:
        // the largest single cost in a profile of the job alone (bench/README.md). Safe here because
        // no function changes a record after emitting it or keeps one it received across calls
        // (records that cross a shuffle are deserialized fresh; state holds what functions build).
        env.getConfig().enableObjectReuse();
        Duration outOfOrderness = options.get(JobOptions.WATERMARK_OUT_OF_ORDERNESS);
        WatermarkStrategy<ParsedRecord> watermarks = WatermarkStrategy
                .<ParsedRecord>forGenerator(context -> new TrustedEventTimeWatermarks(outOfOrderness))
                .withTimestampAssigner((record, kafkaTimestamp) -> record.eventTimeMillis())
                .withIdleness(options.get(JobOptions.WATERMARK_IDLENESS));

        SingleOutputStreamOperator<IngestedEvent> events = env
                .fromSource(source, watermarks, "audit-raw-source")
                .uid("audit-raw-source")
                .process(new SplitDeadLetters())
                .name("split-dead-letters").uid("split-dead-letters");

        SingleOutputStreamOperator<IngestedEvent> firstCopies = events
                .keyBy(new ServerOfEvent())
                .process(new ChainEvents(STATS_WINDOW, options.get(JobOptions.STATS_ALLOWED_LATENESS),
                        options.get(JobOptions.CHAIN_HEAD_INTERVAL)))
                .name("first-copies-in-chain").uid("first-copies-in-chain");
        firstCopies.sinkTo(eventSink).name("store-events").uid("store-events");
        DataStream<ChainHead> heads = firstCopies.getSideOutput(ChainEvents.HEADS);
        heads.sinkTo(chainHeadStoreSink != null ? chainHeadStoreSink : new DiscardingSink<>())
                .name("store-chain-heads").uid("store-chain-heads");
        if (serverStoreSink != null) {
            heads.sinkTo(serverStoreSink).name("store-servers").uid("store-servers");
        }
        if (kafkaLagReporter != null) {
            heads.sinkTo(kafkaLagReporter).setParallelism(1).name("kafka-lag").uid("kafka-lag");
        }
        if (archiveEventSink != null) {
            // a thread of its own: encoding Parquet on the chain's thread made the archive and the chain
            // take turns (the chain runs where its server's records arrive: one busy server, one subtask)
            firstCopies.sinkTo(archiveEventSink).name("archive-events").uid("archive-events").disableChaining();
            heads.sinkTo(archiveChainHeadSink).name("archive-chain-heads").uid("archive-chain-heads");
        }

        SingleOutputStreamOperator<StatsRow> stats = firstCopies
                .map(StatsEvent::of, TypeInformation.of(StatsEvent.class)).name("stats-fields").uid("stats-fields") // a few fields cross the shuffle
                .keyBy(new StatsKeySelector())
                .window(TumblingEventTimeWindows.of(STATS_WINDOW))
                .allowedLateness(options.get(JobOptions.STATS_ALLOWED_LATENESS))
                .trigger(new EarlyFiringEventTimeTrigger(options.get(JobOptions.STATS_EARLY_FIRE_INTERVAL)))
                .sideOutputLateData(TOO_LATE_FOR_STATS)
                .aggregate(new CountEvents(), new EmitStatsRow())
                .name("stats-1m").uid("stats-1m");
        stats.sinkTo(statsSink).name("store-stats").uid("store-stats");

        alerts(env.fromSource(alertSource != null ? alertSource : source, watermarks, "audit-raw-source-for-alerts")
                .uid("audit-raw-source-for-alerts")
                .flatMap(new EventsOfRecords()).name("events-for-alerts").uid("events-for-alerts"));

        DataStream<DeadLetter> deadLetters = events.getSideOutput(SplitDeadLetters.DEAD_LETTERS)
                .union(firstCopies.getSideOutput(ChainEvents.COLLISIONS))
                .union(stats.getSideOutput(TOO_LATE_FOR_STATS)
                        .map(new TooLateForStats()).name("too-late-for-stats").uid("too-late-for-stats"));
        deadLetters.sinkTo(deadLetterStoreSink).name("store-dead-letters").uid("store-dead-letters");
        if (deadLetterTopicSink != null) {
            deadLetters.sinkTo(deadLetterTopicSink).name("kafka-dead-letters").uid("kafka-dead-letters");
        }
    }

    /** The alert rules (docs/alerts.md) over every event the alert source reads, each alert id once, and the alerts' sinks. */
    private void alerts(DataStream<AuditEvent> enriched) {
        AlertSettings settings = AlertSettings.fromOptions(options);
        DataStream<AuditEvent> logins = enriched.filter(new IsLogin()).name("logins").uid("logins");
        DataStream<Alert> perAccount = logins
                .keyBy(new ServerAndUser())
                .process(new FailedLoginsPerAccount(settings))
                .name("alert-logins-per-account").uid("alert-logins-per-account");
        DataStream<Alert> perOrigin = logins
                .filter(new IsFailedLoginWithOrigin()).name("failed-logins-with-origin").uid("failed-logins-with-origin")
                .keyBy(new ServerAndOrigin())
                .process(new FailedLoginsPerOrigin(settings))
                .name("alert-logins-per-origin").uid("alert-logins-per-origin");
        DataStream<Alert> unauthorized = enriched
                .flatMap(new ViolationsPerClass()).name("access-violations").uid("access-violations")
                .keyBy(new ServerUserAndClass())
                .process(new UnauthorizedAccess(settings))
                .name("alert-unauthorized-access").uid("alert-unauthorized-access");
        DataStream<Alert> perEvent = enriched.flatMap(new EventRules(settings)).name("alert-event-rules").uid("alert-event-rules");
        DataStream<Alert> gaps = enriched
                .flatMap(new NumberedRecords()).name("records-in-a-sequence").uid("records-in-a-sequence")
                .keyBy(new RecordSequence())
                .process(new RecordGaps(settings))
                .name("alert-record-gaps").uid("alert-record-gaps");
        DataStream<Alert> alerts = perAccount.union(perOrigin, unauthorized, perEvent, gaps)
                .keyBy(new AlertId())
                .process(new AlertsOnce())
                .name("each-alert-once").uid("each-alert-once");
        // a task of its own: a store that stops answering holds back this writer, not the topic's and the webhook's
        alerts.sinkTo(alertStoreSink != null ? alertStoreSink : new DiscardingSink<>()).name("store-alerts").uid("store-alerts")
                .disableChaining();
        if (alertTopicSink != null) {
            alerts.sinkTo(alertTopicSink).name("kafka-alerts").uid("kafka-alerts");
        }
        if (alertWebhookSink != null) {
            alerts.sinkTo(alertWebhookSink).name("webhook-alerts").uid("webhook-alerts");
        }
    }

    /** The event of each record; dead letters are left out (the store path reports them). */
    static final class EventsOfRecords implements FlatMapFunction<ParsedRecord, AuditEvent> {
        @Override
        public void flatMap(ParsedRecord r, Collector<AuditEvent> out) {
            if (r.event != null) out.collect(r.event.event);
        }
    }

    static final class AlertId implements KeySelector<Alert, String> {
        @Override
        public String getKey(Alert a) {
            return a.id;
        }
    }

    static final class IsLogin implements FilterFunction<AuditEvent> {
        @Override
        public boolean filter(AuditEvent e) {
            return e.isLoginEvent() && e.user != null;
        }
    }

    static final class IsFailedLoginWithOrigin implements FilterFunction<AuditEvent> {
        @Override
        public boolean filter(AuditEvent e) {
            return e.isFailedLogin() && FailedLoginsPerOrigin.origin(e) != null;
        }
    }

    static final class ServerAndUser implements KeySelector<AuditEvent, String> {
        @Override
        public String getKey(AuditEvent e) {
            return e.server + "\u0000" + e.user;
        }
    }

    static final class ServerAndOrigin implements KeySelector<AuditEvent, String> {
        @Override
        public String getKey(AuditEvent e) {
            return e.server + "\u0000" + FailedLoginsPerOrigin.origin(e);
        }
    }

    static final class ServerUserAndClass implements KeySelector<AuditEvent, String> {
        @Override
        public String getKey(AuditEvent e) {
            return UnauthorizedAccess.key(e);
        }
    }

    /** Records in a server's own sequence, as the few fields the gap rule reads. */
    static final class NumberedRecords implements FlatMapFunction<AuditEvent, RecordGaps.Numbered> {
        @Override
        public void flatMap(AuditEvent e, Collector<RecordGaps.Numbered> out) {
            RecordGaps.Numbered r = RecordGaps.numbered(e);
            if (r != null) out.collect(r);
        }
    }

    static final class RecordSequence implements KeySelector<RecordGaps.Numbered, String> {
        @Override
        public String getKey(RecordGaps.Numbered r) {
            return r.sequence;
        }
    }

    static final class ViolationsPerClass implements FlatMapFunction<AuditEvent, AuditEvent> {
        @Override
        public void flatMap(AuditEvent e, Collector<AuditEvent> out) {
            if (e.user != null) UnauthorizedAccess.perClass(e, out);
        }
    }

    public JobExecutionResult execute(StreamExecutionEnvironment env) throws Exception {
        build(env);
        return env.execute(options.get(JobOptions.JOB_NAME));
    }

    /** Checkpointing as the job needs it: exactly-once state (the window counts), retained checkpoints. */
    public static void configureCheckpointing(StreamExecutionEnvironment env, Configuration options) {
        env.enableCheckpointing(options.get(JobOptions.CHECKPOINT_INTERVAL).toMillis(), CheckpointingMode.EXACTLY_ONCE);
        env.getCheckpointConfig().setExternalizedCheckpointRetention(
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    }

    public static KafkaSource<ParsedRecord> kafkaSource(Configuration options) {
        return kafkaSourceBuilder(options).setDeserializer(new AuditRecordDeserializer(
                options.get(JobOptions.EVENT_TIME_MAX_AHEAD), JobOptions.compliance(options))).build();
    }

    /**
     * The alert rules' source: the same topic, from where the job's consumer group stands the first
     * time (then from its own checkpointed offsets), committing nothing to the group.
     */
    public static KafkaSource<ParsedRecord> alertKafkaSource(Configuration options) {
        return kafkaSourceBuilder(options)
                .setDeserializer(AuditRecordDeserializer.forAlerts(options.get(JobOptions.EVENT_TIME_MAX_AHEAD),
                        JobOptions.compliance(options)))
                .setClientIdPrefix(options.get(JobOptions.KAFKA_GROUP_ID) + "-alerts")
                .setProperty("commit.offsets.on.checkpoint", "false")
                .build();
    }

    private static KafkaSourceBuilder<ParsedRecord> kafkaSourceBuilder(Configuration options) {
        KafkaSourceBuilder<ParsedRecord> builder = KafkaSource.<ParsedRecord>builder()
                .setBootstrapServers(options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS))
                .setTopics(options.get(JobOptions.KAFKA_RAW_TOPIC))
                .setGroupId(options.get(JobOptions.KAFKA_GROUP_ID))
                .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
                .setProperty("partition.discovery.interval.ms", "60000");
        JobOptions.kafkaClientProperties(options).forEach(builder::setProperty);
        return builder;
    }

    /** Largest dead-letter document in the store: BSON allows 16 MiB, and the document needs some room. */
    static final int STORE_MAX_DEAD_LETTER_BYTES = 15 * 1024 * 1024;

    public static AuditPipelineJob fromOptions(Configuration options) {
        int deadLetterMessageBytes = options.get(JobOptions.DEAD_LETTER_MAX_MESSAGE_BYTES);
        int deadLetterDocumentBytes = Math.min(deadLetterMessageBytes, STORE_MAX_DEAD_LETTER_BYTES);
        // store rejections go to the dead-letter topic too, like every other dead letter
        String deadLetterTopic = options.get(JobOptions.KAFKA_DEAD_LETTER_TOPIC);
        Map<String, String> rejectionProducer = new java.util.HashMap<>(JobOptions.kafkaClientProperties(options));
        rejectionProducer.put("bootstrap.servers", options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS));
        rejectionProducer.put("max.request.size", String.valueOf(deadLetterMessageBytes));
        Properties deadLetterTopicProducer = new Properties();
        deadLetterTopicProducer.putAll(JobOptions.kafkaClientProperties(options));
        deadLetterTopicProducer.put("max.request.size", String.valueOf(deadLetterMessageBytes));
        deadLetterTopicProducer.put("bootstrap.servers", options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS));
        return new AuditPipelineJob(options,
                kafkaSource(options),
                new MongoBulkSink<>(MongoSinkSettings.forCollection(options, options.get(JobOptions.EVENTS_COLLECTION))
                        .withDigestField(StoreDocuments.LINE_DIGEST_FIELD)
                        .withDeadLetterTopic(deadLetterTopic, rejectionProducer)
                        .withBatchesInFlight(EVENT_BATCHES_IN_FLIGHT), StoreDocuments::eventInsert),
                new MongoBulkSink<>(MongoSinkSettings.forCollection(options, options.get(JobOptions.STATS_COLLECTION))
                        .withDeadLetterTopic(deadLetterTopic, rejectionProducer), StoreDocuments::statsUpsert),
                new MongoBulkSink<>(MongoSinkSettings.forCollection(options, options.get(JobOptions.DEAD_LETTER_COLLECTION)),
                        dl -> StoreDocuments.deadLetterInsert(dl, deadLetterDocumentBytes)),
                KafkaSink.<DeadLetter>builder()
                        .setBootstrapServers(options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS))
                        .setRecordSerializer(new DeadLetterKafkaSerializer(options.get(JobOptions.KAFKA_DEAD_LETTER_TOPIC),
                                deadLetterMessageBytes))
                        .setKafkaProducerConfig(deadLetterTopicProducer)
                        .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                        .build())
                .withAlertSinks(
                        new MongoBulkSink<>(MongoSinkSettings.forCollection(options, options.get(JobOptions.ALERTS_COLLECTION)),
                                StoreDocuments::alertInsert),
                        KafkaSink.<Alert>builder()
                                .setBootstrapServers(options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS))
                                .setRecordSerializer(new AlertKafkaSerializer(options.get(JobOptions.KAFKA_ALERTS_TOPIC)))
                                .setKafkaProducerConfig(alertProducer(options))
                                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                                .build(),
                        options.contains(JobOptions.ALERT_WEBHOOK_URL)
                                ? new WebhookSink(options.get(JobOptions.ALERT_WEBHOOK_URL), options.get(JobOptions.ALERT_WEBHOOK_TIMEOUT),
                                options.get(JobOptions.ALERT_WEBHOOK_RETRIES), options.get(JobOptions.ALERT_WEBHOOK_QUEUE))
                                : null)
                .withChainHeadSink(new MongoBulkSink<>(MongoSinkSettings.forCollection(options,
                        options.get(JobOptions.CHAIN_HEADS_COLLECTION)), StoreDocuments::chainHeadInsert))
                .withServerSink(new MongoBulkSink<>(MongoSinkSettings.forCollection(options,
                        options.get(JobOptions.SERVERS_COLLECTION)), StoreDocuments::serverUpsert))
                .withAlertSource(alertKafkaSource(options))
                .withKafkaLagReporter(kafkaLagReporter(options))
                .withArchive(options.contains(JobOptions.ARCHIVE_PATH) ? EventArchive.events(options.get(JobOptions.ARCHIVE_PATH)) : null,
                        options.contains(JobOptions.ARCHIVE_PATH) ? EventArchive.chainHeads(options.get(JobOptions.ARCHIVE_PATH)) : null);
    }

    private static KafkaLagReporter<ChainHead> kafkaLagReporter(Configuration options) {
        if (options.get(JobOptions.KAFKA_LAG_INTERVAL).isZero()) {
            return null;
        }
        Map<String, String> client = new java.util.HashMap<>(JobOptions.kafkaClientProperties(options));
        client.put("bootstrap.servers", options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS));
        return new KafkaLagReporter<>(client, options.get(JobOptions.KAFKA_RAW_TOPIC), options.get(JobOptions.KAFKA_GROUP_ID),
                options.get(JobOptions.STORE_URI), options.get(JobOptions.STORE_DATABASE),
                options.get(JobOptions.KAFKA_LAG_COLLECTION), options.get(JobOptions.KAFKA_LAG_INTERVAL));
    }

    private static Properties alertProducer(Configuration options) {
        Properties p = new Properties();
        p.putAll(JobOptions.kafkaClientProperties(options));
        p.put("bootstrap.servers", options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS));
        return p;
    }

    public static void main(String[] args) throws Exception {
        Path config = null;
        boolean checkOnly = false;
        for (int i = 0; i < args.length; i++) {
            if ("--config".equals(args[i]) && i + 1 < args.length) {
                config = Path.of(args[++i]);
            } else if ("--check-options".equals(args[i])) {
                checkOnly = true;
            } else if ("--print-options".equals(args[i])) {
                System.out.print(JobOptions.markdownReference());
                return;
            }
        }
        if (config == null) {
            System.err.println("usage: AuditPipelineJob --config <job.properties> [--check-options] | --print-options");
            System.exit(2);
        }
        JobOptions.Loaded loaded;
        try {
            loaded = JobOptions.load(config);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        if (checkOnly) {  // the deployment's options, validated without running (tests/e2e/test_deployment_job_options.py)
            System.out.println(config + ": the job's options are valid");
            return;
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(loaded.flink);
        configureCheckpointing(env, loaded.job);
        fromOptions(loaded.job).execute(env);
    }
}
