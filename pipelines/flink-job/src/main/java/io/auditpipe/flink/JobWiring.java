package io.auditpipe.flink;

import io.auditpipe.flink.archive.EventArchive;
import io.auditpipe.flink.chain.ChainHead;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.history.ImportCounters;
import io.auditpipe.flink.lag.KafkaLagReporter;
import io.auditpipe.flink.options.JobOptions;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.flink.sink.AlertKafkaSerializer;
import io.auditpipe.flink.sink.CountedSink;
import io.auditpipe.flink.sink.DeadLetterKafkaSerializer;
import io.auditpipe.flink.sink.MongoBulkSink;
import io.auditpipe.flink.sink.MongoSinkSettings;
import io.auditpipe.flink.sink.StoreDocuments;
import io.auditpipe.flink.sink.StoreProfileSeeds;
import io.auditpipe.flink.sink.WebhookSink;
import io.auditpipe.flink.stream.StreamFormat;
import io.auditpipe.flink.stream.StreamMessage;
import io.auditpipe.flink.stream.StreamMessages;
import io.auditpipe.flink.stream.StreamSerializer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.TransactionNamingStrategy;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;

/**
 * The real sources and sinks, from the job's options: Kafka, the store (MongoDB or FerretDB), the
 * archive, the webhook.
 */
public final class JobWiring {
    private JobWiring() {}

    /**
     * The events' store writer writes two batches at once on FerretDB (inserts by _id only: either
     * order stores the same): the store turns one batch's documents into its own form while it
     * writes the other (docs/store.md "insert batches"). MongoDB trims capped collections in
     * arrival order, and one batch at a time keeps the chain's order there (docs/archive.md). Every
     * other writer keeps one: their upserts must apply in order.
     */
    static final int EVENT_BATCHES_IN_FLIGHT = 2;

    /**
     * Largest dead-letter document in the store: BSON allows 16 MiB, and the document needs some
     * room.
     */
    public static final int STORE_MAX_DEAD_LETTER_BYTES = 15 * 1024 * 1024;

    public static PipelineSources sources(Configuration options) {
        return new PipelineSources(kafkaSource(options), alertKafkaSource(options));
    }

    /** The live job's sinks. */
    public static PipelineSinks sinks(Configuration options) {
        return sinks(options, false);
    }

    /**
     * The sinks of imported history ({@code ImportJob}): the store's and the archive's, without the
     * capped collection, the alerts, the servers collection and the lag sampler.
     */
    public static PipelineSinks historySinks(Configuration options) {
        return sinks(options, true);
    }

    private static PipelineSinks sinks(Configuration options, boolean history) {
        int deadLetterMessageBytes = options.get(JobOptions.DEAD_LETTER_MAX_MESSAGE_BYTES);
        // store rejections go to the dead-letter topic too, like every other dead letter
        String deadLetterTopic = options.get(JobOptions.KAFKA_DEAD_LETTER_TOPIC);
        Map<String, String> rejectionProducer = kafkaClient(options);
        rejectionProducer.put("max.request.size", String.valueOf(deadLetterMessageBytes));
        PipelineSinks.Builder sinks = PipelineSinks.builder();
        storeAndArchive(
                sinks,
                options,
                history,
                deadLetterTopic,
                rejectionProducer,
                deadLetterMessageBytes);
        if (history) {
            return sinks.history().build();
        }
        live(sinks, options, deadLetterTopic, rejectionProducer);
        outsideTheStore(sinks, options);
        return sinks.build();
    }

    /**
     * What live shipping and imported history both write: the store's evidence, counts, dead
     * letters, heads, baselines and the archive.
     */
    private static void storeAndArchive(
            PipelineSinks.Builder sinks,
            Configuration options,
            boolean history,
            String deadLetterTopic,
            Map<String, String> rejectionProducer,
            int deadLetterMessageBytes) {
        int deadLetterDocumentBytes = Math.min(deadLetterMessageBytes, STORE_MAX_DEAD_LETTER_BYTES);
        sinks
                // a duplicate _id here is the event stored already: collisions are the events
                // writer's to report
                .evidence(
                        new MongoBulkSink<>(
                                store(options, history, JobOptions.EVIDENCE_COLLECTION)
                                        .withDeadLetterTopic(deadLetterTopic, rejectionProducer),
                                StoreDocuments::eventInsert))
                // imported history's hours and days are written once each
                // (AuditPipeline.windowed): inserts
                .statsHourly(
                        new MongoBulkSink<>(
                                store(options, history, JobOptions.STATS_HOURLY_COLLECTION)
                                        .withDeadLetterTopic(deadLetterTopic, rejectionProducer),
                                row -> StoreDocuments.hour(row, history)))
                .rollups(
                        new MongoBulkSink<>(
                                store(options, history, JobOptions.ROLLUPS_COLLECTION)
                                        .withDeadLetterTopic(deadLetterTopic, rejectionProducer),
                                row -> StoreDocuments.rollup(row, history)))
                .deadLetters(
                        counted(
                                history,
                                new MongoBulkSink<>(
                                        store(options, history, JobOptions.DEAD_LETTER_COLLECTION),
                                        dl ->
                                                StoreDocuments.deadLetterInsert(
                                                        dl, deadLetterDocumentBytes))))
                .deadLetterTopic(
                        atLeastOnce(
                                options,
                                new DeadLetterKafkaSerializer(
                                        deadLetterTopic, deadLetterMessageBytes),
                                rejectionProducer))
                .chainHeads(
                        new MongoBulkSink<>(
                                store(options, history, JobOptions.CHAIN_HEADS_COLLECTION),
                                StoreDocuments::chainHeadInsert));
        if (options.contains(JobOptions.ARCHIVE_PATH)) {
            String archive = options.get(JobOptions.ARCHIVE_PATH);
            sinks.archive(EventArchive.events(archive), EventArchive.chainHeads(archive));
        }
        MongoSinkSettings baselines =
                MongoSinkSettings.forProfiles(
                        options, options.get(JobOptions.BASELINES_COLLECTION));
        sinks.baselines(
                new MongoBulkSink<>(
                        history ? baselines.withRejections(ImportCounters::rejected) : baselines,
                        StoreDocuments::baselineUpsert),
                new StoreProfileSeeds(
                        MongoSinkSettings.profilesUri(options),
                        options.get(JobOptions.STORE_DATABASE),
                        options.get(JobOptions.BASELINES_COLLECTION)));
    }

    /**
     * What only live shipping writes: the capped events, the minute counts, the alerts, the servers
     * and the sessions.
     */
    private static void live(
            PipelineSinks.Builder sinks,
            Configuration options,
            String deadLetterTopic,
            Map<String, String> rejectionProducer) {
        sinks.stats(
                new MongoBulkSink<>(
                        store(options, JobOptions.STATS_COLLECTION)
                                .withDeadLetterTopic(deadLetterTopic, rejectionProducer),
                        StoreDocuments::statsUpsert));
        sinks.events(
                        new MongoBulkSink<>(
                                store(options, JobOptions.EVENTS_COLLECTION)
                                        .withDigestField(EventDocument.LINE_DIGEST_FIELD)
                                        .withDeadLetterTopic(deadLetterTopic, rejectionProducer)
                                        .withBatchesInFlight(EVENT_BATCHES_IN_FLIGHT),
                                StoreDocuments::eventInsert))
                .alerts(
                        new MongoBulkSink<>(
                                store(options, JobOptions.ALERTS_COLLECTION)
                                        .withFlushInterval(alertFlushInterval(options)),
                                StoreDocuments::alertInsert))
                .alertTopic(
                        atLeastOnce(
                                options,
                                new AlertKafkaSerializer(
                                        options.get(JobOptions.KAFKA_ALERTS_TOPIC)),
                                kafkaClient(options)))
                .servers(
                        new MongoBulkSink<>(
                                store(options, JobOptions.SERVERS_COLLECTION),
                                StoreDocuments::serverUpsert))
                .sessions(
                        new MongoBulkSink<>(
                                MongoSinkSettings.forProfiles(
                                                options,
                                                options.get(JobOptions.SESSIONS_COLLECTION))
                                        .withDeadLetterTopic(deadLetterTopic, rejectionProducer),
                                StoreDocuments::sessionUpsert));
    }

    /**
     * The live job's sinks beyond the store: the alerts' webhook, the event stream and the lag
     * sampler.
     */
    private static void outsideTheStore(PipelineSinks.Builder sinks, Configuration options) {
        if (options.contains(JobOptions.ALERT_WEBHOOK_URL)) {
            sinks.alertWebhook(
                    new WebhookSink(
                            options.get(JobOptions.ALERT_WEBHOOK_URL),
                            options.get(JobOptions.ALERT_WEBHOOK_TIMEOUT),
                            options.get(JobOptions.ALERT_WEBHOOK_RETRIES),
                            options.get(JobOptions.ALERT_WEBHOOK_QUEUE),
                            options.getOptional(JobOptions.ALERT_WEBHOOK_SECRET).orElse(null)));
        }
        List<StreamFormat> formats = StreamFormat.parse(options.get(JobOptions.STREAM_FORMATS));
        if (!formats.isEmpty()) {
            Map<StreamFormat, String> topics = new EnumMap<>(StreamFormat.class);
            topics.put(StreamFormat.AUDITPIPE, options.get(JobOptions.KAFKA_EVENTS_TOPIC));
            topics.put(StreamFormat.OCSF, options.get(JobOptions.KAFKA_OCSF_TOPIC));
            topics.put(StreamFormat.ECS, options.get(JobOptions.KAFKA_ECS_TOPIC));
            String prefix = options.get(JobOptions.STREAM_TRANSACTIONAL_ID_PREFIX);
            List<String> written = formats.stream().map(topics::get).toList();
            sinks.stream(
                    new StreamMessages.Settings(
                            formats,
                            topics,
                            JobWiring.class.getPackage().getImplementationVersion() != null
                                    ? JobWiring.class.getPackage().getImplementationVersion()
                                    : "dev"),
                    name -> streamSink(options, prefix + name, written));
        }
        if (!options.get(JobOptions.KAFKA_LAG_INTERVAL).isZero()) {
            sinks.kafkaLag(
                    new KafkaLagReporter<ChainHead>(
                            kafkaClient(options),
                            options.get(JobOptions.KAFKA_RAW_TOPIC),
                            options.get(JobOptions.KAFKA_GROUP_ID),
                            options.get(JobOptions.STORE_URI),
                            options.get(JobOptions.STORE_DATABASE),
                            options.get(JobOptions.KAFKA_LAG_COLLECTION),
                            options.get(JobOptions.KAFKA_LAG_INTERVAL).toMillis()));
        }
    }

    /**
     * How long a transaction of the stream may stay open: the broker's default limit
     * (transaction.max.timeout.ms, 15 minutes). A transaction is committed when the checkpoint that
     * closed it completes; a job down longer than this after a checkpoint loses that checkpoint's
     * messages from the stream (the broker aborts them), never the events in the store
     * (docs/stream.md).
     */
    static final String STREAM_TRANSACTION_TIMEOUT_MS = "900000";

    /**
     * A sink of the event stream: exactly once, in Kafka transactions committed with the
     * checkpoints, their ids beginning with {@code prefix} and reused (the POOLING strategy: a few
     * ids per writer, not one per checkpoint, which the broker would keep for a week each).
     */
    static KafkaSink<StreamMessage> streamSink(
            Configuration options, String prefix, List<String> topics) {
        Map<String, String> client = kafkaClient(options);
        client.put("transaction.timeout.ms", STREAM_TRANSACTION_TIMEOUT_MS);
        // the largest message and Kafka's record framing (the CLI gives the topics the same room:
        // limits.py)
        client.put(
                "max.request.size", String.valueOf(StreamMessages.MAX_MESSAGE_BYTES + 64 * 1024));
        return KafkaSink.<StreamMessage>builder()
                .setBootstrapServers(options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS))
                .setRecordSerializer(new StreamSerializer(topics))
                .setKafkaProducerConfig(producer(client))
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(prefix)
                .setTransactionNamingStrategy(TransactionNamingStrategy.POOLING)
                .build();
    }

    /**
     * The store path's source: the raw topic from the job's consumer group, offsets committed on
     * each checkpoint.
     */
    public static KafkaSource<ParsedRecord> kafkaSource(Configuration options) {
        return kafkaSourceBuilder(options)
                .setDeserializer(
                        new AuditRecordDeserializer(
                                options.get(JobOptions.EVENT_TIME_MAX_AHEAD),
                                JobOptions.compliance(options)))
                .build();
    }

    /**
     * The alert rules' source: the same topic, from where the job's consumer group stands the first
     * time (then from its own checkpointed offsets), committing nothing to the group (the group's
     * committed offsets are the store path's, which {@code auditpipe status} reports as lag).
     */
    public static KafkaSource<ParsedRecord> alertKafkaSource(Configuration options) {
        return kafkaSourceBuilder(options)
                .setDeserializer(
                        AuditRecordDeserializer.forAlerts(
                                options.get(JobOptions.EVENT_TIME_MAX_AHEAD),
                                JobOptions.compliance(options)))
                .setClientIdPrefix(options.get(JobOptions.KAFKA_GROUP_ID) + "-alerts")
                .setProperty("commit.offsets.on.checkpoint", "false")
                .build();
    }

    private static KafkaSourceBuilder<ParsedRecord> kafkaSourceBuilder(Configuration options) {
        KafkaSourceBuilder<ParsedRecord> builder =
                KafkaSource.<ParsedRecord>builder()
                        .setBootstrapServers(options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS))
                        .setTopics(options.get(JobOptions.KAFKA_RAW_TOPIC))
                        .setGroupId(options.get(JobOptions.KAFKA_GROUP_ID))
                        .setStartingOffsets(
                                OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
                        .setProperty("partition.discovery.interval.ms", "60000")
                        .setProperty("fetch.max.wait.ms", JobOptions.SOURCE_FETCH_MAX_WAIT_MS);
        JobOptions.kafkaClientProperties(options).forEach(builder::setProperty);
        return builder;
    }

    /**
     * The alerts' writers wait at most this long with a partly filled batch: alerts are few, so a
     * batch of them costs the store next to nothing, and an alert's promise (visible within a
     * second) is tighter than an event's. A timer is set by the write that starts a batch ({@code
     * FlushTimer}), so with {@code sink.flush-interval} (500 ms) every lone alert waited the whole
     * of it.
     */
    static final Duration ALERT_FLUSH_INTERVAL = Duration.ofMillis(100);

    /** {@link #ALERT_FLUSH_INTERVAL}, or {@code sink.flush-interval} where that is shorter. */
    static Duration alertFlushInterval(Configuration options) {
        Duration configured = options.get(JobOptions.SINK_FLUSH_INTERVAL);
        return configured.compareTo(ALERT_FLUSH_INTERVAL) < 0 ? configured : ALERT_FLUSH_INTERVAL;
    }

    private static MongoSinkSettings store(
            Configuration options, org.apache.flink.configuration.ConfigOption<String> collection) {
        return MongoSinkSettings.forCollection(options, options.get(collection));
    }

    /**
     * Imported history's writers also count what the store refuses, for the import's summary
     * ({@link ImportCounters}).
     */
    private static MongoSinkSettings store(
            Configuration options,
            boolean history,
            org.apache.flink.configuration.ConfigOption<String> collection) {
        MongoSinkSettings settings = store(options, collection);
        return history ? settings.withRejections(ImportCounters::rejected) : settings;
    }

    /**
     * Imported history counts each dead letter as it goes to the store, by stage and reason ({@link
     * ImportCounters}).
     */
    private static Sink<DeadLetter> counted(boolean history, Sink<DeadLetter> deadLetters) {
        return history ? new CountedSink<>(deadLetters, ImportCounters::deadLetter) : deadLetters;
    }

    /** Every Kafka client's properties: the security settings and the bootstrap servers. */
    private static Map<String, String> kafkaClient(Configuration options) {
        Map<String, String> client = new HashMap<>(JobOptions.kafkaClientProperties(options));
        client.put("bootstrap.servers", options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS));
        return client;
    }

    /**
     * A Kafka sink that delivers each record at least once, as the {@code client} settings connect.
     */
    private static <T> KafkaSink<T> atLeastOnce(
            Configuration options,
            KafkaRecordSerializationSchema<T> serializer,
            Map<String, String> client) {
        return KafkaSink.<T>builder()
                .setBootstrapServers(options.get(JobOptions.KAFKA_BOOTSTRAP_SERVERS))
                .setRecordSerializer(serializer)
                .setKafkaProducerConfig(producer(client))
                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                .build();
    }

    private static Properties producer(Map<String, String> client) {
        Properties p = new Properties();
        p.putAll(client);
        return p;
    }
}
