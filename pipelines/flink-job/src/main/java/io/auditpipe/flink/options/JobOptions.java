package io.auditpipe.flink.options;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.util.TimeUtils;

/**
 * Every option of the job: a typed constant with its default and description (the pattern of
 * flink-connector-kafka's KafkaSourceOptions). The job reads them from a properties file given with
 * {@code --config}; keys starting with {@code flink.} are Flink's own settings, passed through with
 * the prefix removed (the local stack uses them for the REST port, checkpoint directory and the
 * checkpoint to restore; a real cluster usually needs none).
 *
 * <p>{@link #load} rejects unknown keys and unparsable values, naming the key.
 */
public final class JobOptions {
    private JobOptions() {}

    public static final String FLINK_PREFIX = "flink.";

    /**
     * {@code kafka.client.<property>=<value>}: a Kafka client property (security.protocol,
     * sasl.jaas.config, ssl.truststore.location, ...) for every Kafka client of the job. The CLI
     * writes them from the config's kafka.security.
     */
    public static final String KAFKA_CLIENT_PREFIX = "kafka.client.";

    /**
     * How long the broker holds the sources' fetch of a quiet topic before answering it empty. A
     * record answers it at once whatever this is (fetch.min.bytes is 1), so it costs no latency;
     * Kafka's default of 500 ms has each of the two sources fetch twice a second while nothing is
     * written, which took about 0.9% of a core of an idle stack's 11% between the job's fetchers
     * and the broker's request threads (bench/README.md "Idle"). A {@code
     * kafka.client.fetch.max.wait.ms} job option overrides it.
     */
    public static final String SOURCE_FETCH_MAX_WAIT_MS = "5000";

    /**
     * {@code compliance.<...>}: data classes, principals, masking and change windows, read by
     * {@link io.auditpipe.enrich.ComplianceSettings#fromProperties} (docs/compliance.md). The CLI
     * writes them from the config's {@code compliance} section.
     */
    public static final String COMPLIANCE_PREFIX = io.auditpipe.enrich.ComplianceSettings.PREFIX;

    /** The compliance settings of the job (validated by {@link #load}). */
    public static io.auditpipe.enrich.ComplianceSettings compliance(Configuration job) {
        return io.auditpipe.enrich.ComplianceSettings.fromProperties(job.toMap());
    }

    /** The {@link #KAFKA_CLIENT_PREFIX} properties, without the prefix. */
    public static Map<String, String> kafkaClientProperties(Configuration job) {
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<String, String> e : job.toMap().entrySet()) {
            if (e.getKey().startsWith(KAFKA_CLIENT_PREFIX)) {
                out.put(e.getKey().substring(KAFKA_CLIENT_PREFIX.length()), e.getValue());
            }
        }
        return out;
    }

    public static final ConfigOption<String> KAFKA_BOOTSTRAP_SERVERS =
            ConfigOptions.key("kafka.bootstrap-servers")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("Kafka bootstrap servers, host:port[,host:port...].");
    public static final ConfigOption<String> KAFKA_RAW_TOPIC =
            ConfigOptions.key("kafka.topic.raw")
                    .stringType()
                    .defaultValue("audit.raw")
                    .withDescription(
                            "Topic the collectors write raw audit lines to (schemas/audit-raw-message.md).");
    public static final ConfigOption<String> KAFKA_DEAD_LETTER_TOPIC =
            ConfigOptions.key("kafka.topic.dead-letter")
                    .stringType()
                    .defaultValue("audit.deadletter")
                    .withDescription(
                            "Topic that receives dead letters (schemas/dead-letter.schema.json).");
    public static final ConfigOption<Integer> DEAD_LETTER_MAX_MESSAGE_BYTES =
            ConfigOptions.key("kafka.dead-letter.max-message-bytes")
                    .intType()
                    .defaultValue(8 * 1024 * 1024)
                    .withDescription(
                            "Largest dead-letter message: the producer's max.request.size; the dead-letter topic's"
                                    + " max.message.bytes must allow it. A dead letter never exceeds it: one that would keeps less of its"
                                    + " line (original.truncated, with the full length and SHA-256). The CLI derives it from max_line_size"
                                    + " so that every line the collectors ship fits whole.");

    /** The smallest {@link #DEAD_LETTER_MAX_MESSAGE_BYTES} the job accepts. */
    public static final int DEAD_LETTER_MIN_MESSAGE_BYTES = 64 * 1024;

    public static final ConfigOption<String> KAFKA_GROUP_ID =
            ConfigOptions.key("kafka.group-id")
                    .stringType()
                    .defaultValue("auditpipe-flink")
                    .withDescription(
                            "Consumer group of the store path's source; offsets are committed there on each checkpoint,"
                                    + " for lag monitoring. The alert rules' source starts from them and commits nothing.");

    public static final ConfigOption<String> STORE_URI =
            ConfigOptions.key("store.uri")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "MongoDB connection string of the store (MongoDB or FerretDB).");
    public static final ConfigOption<String> STORE_PROFILES_URI =
            ConfigOptions.key("store.profiles-uri")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Connection string the sessions and baselines are written (and the baselines read)"
                                    + " with, when it differs from store.uri: a deployment gives it a user whose role reaches only"
                                    + " those two collections and the dead letters, never the events. Unset: store.uri.");
    public static final ConfigOption<String> STORE_DATABASE =
            ConfigOptions.key("store.database")
                    .stringType()
                    .defaultValue("auditpipe")
                    .withDescription("Database of the collections below.");
    public static final ConfigOption<String> EVENTS_COLLECTION =
            ConfigOptions.key("store.collection.events")
                    .stringType()
                    .defaultValue("audit_events")
                    .withDescription(
                            "Capped collection of normalized events, one document per audit record.");
    public static final ConfigOption<String> EVIDENCE_COLLECTION =
            ConfigOptions.key("store.collection.evidence")
                    .stringType()
                    .defaultValue("audit_evidence")
                    .withDescription(
                            "Uncapped collection of the events a reviewer must see one by one (failed logins, account"
                                    + " and privilege changes, events touching classified data, the audit system's own events:"
                                    + " docs/compliance.md \"Evidence\"), the same documents as in the events collection, kept for the"
                                    + " evidence retention.");
    public static final ConfigOption<String> STATS_COLLECTION =
            ConfigOptions.key("store.collection.stats")
                    .stringType()
                    .defaultValue("audit_stats_1m")
                    .withDescription(
                            "Event-time one-minute counts by server, user, event, command class and status.");
    public static final ConfigOption<String> STATS_HOURLY_COLLECTION =
            ConfigOptions.key("store.collection.stats-hourly")
                    .stringType()
                    .defaultValue("audit_stats_1h")
                    .withDescription(
                            "Event-time counts per server and hour, each the sum of the hour's one-minute counts;"
                                    + " imported history writes these and not the minutes' (docs/archive.md \"Imported history\").");
    public static final ConfigOption<String> ROLLUPS_COLLECTION =
            ConfigOptions.key("store.collection.rollups")
                    .stringType()
                    .defaultValue("audit_rollups")
                    .withDescription(
                            "Daily event-time counts of the events a review counts over its whole period (those evidencing"
                                    + " a control, and what administrators do) by server, user, principal class, category, action and"
                                    + " controls (docs/queries.md \"Rollups\"), kept for the evidence retention.");
    public static final ConfigOption<String> SESSIONS_COLLECTION =
            ConfigOptions.key("store.collection.sessions")
                    .stringType()
                    .defaultValue("audit_sessions")
                    .withDescription(
                            "Sessions: each connection from its login to its logout or last record, what it did"
                                    + " (schemas/session.schema.json), kept for the evidence retention.");
    public static final ConfigOption<String> BASELINES_COLLECTION =
            ConfigOptions.key("store.collection.baselines")
                    .stringType()
                    .defaultValue("audit_baselines")
                    .withDescription(
                            "Each principal's learned baseline (schemas/baseline.schema.json), written by imported history at"
                                    + " its end; the live job starts a principal it has no state of from it (docs/alerts.md \"Learned baselines\").");
    public static final ConfigOption<Duration> SESSIONS_IDLE_TIMEOUT =
            ConfigOptions.key("sessions.idle-timeout")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(30))
                    .withDescription(
                            "A session with no record for this long (event time) ends as idle; a later record of its"
                                    + " connection starts a session without a login.");
    public static final ConfigOption<Duration> SESSIONS_REFRESH =
            ConfigOptions.key("sessions.refresh")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(1))
                    .withDescription(
                            "An open session that changed is written again at most this often (event time).");
    public static final ConfigOption<Integer> SESSIONS_MAX_TABLES =
            ConfigOptions.key("sessions.max-tables")
                    .intType()
                    .defaultValue(100)
                    .withDescription(
                            "Tables a session keeps by name; the others are counted (more_tables).");
    public static final ConfigOption<String> DEAD_LETTER_COLLECTION =
            ConfigOptions.key("store.collection.dead-letters")
                    .stringType()
                    .defaultValue("dead_letters")
                    .withDescription(
                            "Dead letters: what could not be parsed or stored, with the reason and the original bytes.");

    public static final ConfigOption<Integer> SINK_BATCH_SIZE =
            ConfigOptions.key("sink.batch-size")
                    .intType()
                    .defaultValue(1000)
                    .withDescription("Documents per bulk write to the store.");
    public static final ConfigOption<Duration> SINK_FLUSH_INTERVAL =
            ConfigOptions.key("sink.flush-interval")
                    .durationType()
                    .defaultValue(Duration.ofMillis(500))
                    .withDescription("Longest time a document waits in a partly filled batch.");
    public static final ConfigOption<Integer> SINK_MAX_RETRIES =
            ConfigOptions.key("sink.max-retries")
                    .intType()
                    .defaultValue(8)
                    .withDescription(
                            "Retries of a failing bulk write before the job fails and restarts from its checkpoint.");
    public static final ConfigOption<Duration> SINK_RETRY_BACKOFF =
            ConfigOptions.key("sink.retry-backoff")
                    .durationType()
                    .defaultValue(Duration.ofMillis(200))
                    .withDescription(
                            "First retry delay; doubles on each retry up to sink.retry-max-backoff.");
    public static final ConfigOption<Duration> SINK_RETRY_MAX_BACKOFF =
            ConfigOptions.key("sink.retry-max-backoff")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription("Longest retry delay.");
    public static final ConfigOption<Duration> SINK_REQUEST_TIMEOUT =
            ConfigOptions.key("sink.request-timeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(60))
                    .withDescription(
                            "Longest wait for the store's answer to a write; then the write is retried (sink.max-retries).");

    public static final ConfigOption<Duration> CHECKPOINT_INTERVAL =
            ConfigOptions.key("checkpoint.interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription(
                            "Checkpoint interval. Sinks flush on every checkpoint, so this bounds replay after a crash.");
    public static final ConfigOption<Duration> WATERMARK_OUT_OF_ORDERNESS =
            ConfigOptions.key("watermark.out-of-orderness")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription(
                            "How far event time may go backwards within one Kafka partition before events count as late.");
    public static final ConfigOption<Duration> EVENT_TIME_MAX_AHEAD =
            ConfigOptions.key("event-time.max-ahead")
                    .durationType()
                    .defaultValue(java.time.Duration.ofMinutes(5))
                    .withDescription(
                            "An event's own time is trusted up to this far ahead of when it was shipped (its Kafka"
                                    + " timestamp). Beyond it the event is stored as written, flagged event_time_trusted: false,"
                                    + " counted in the minute it was shipped, and ignored by the watermarks.");
    public static final ConfigOption<Duration> WATERMARK_IDLENESS =
            ConfigOptions.key("watermark.idleness")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(30))
                    .withDescription(
                            "A partition with no records for this long stops holding back the watermark.");
    public static final ConfigOption<Duration> STATS_ALLOWED_LATENESS =
            ConfigOptions.key("stats.allowed-lateness")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(15))
                    .withDescription(
                            "Late events still update their minute's count for this long after the watermark passed it;"
                                    + " later ones are counted in the dead letters (stage 'stats') and stay in the events collection.");
    public static final ConfigOption<Duration> STATS_EARLY_FIRE_INTERVAL =
            ConfigOptions.key("stats.early-fire-interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(2))
                    .withDescription(
                            "A minute's count is written at most this long after it changes: before the minute closes,"
                                    + " and after it for late events.");
    public static final ConfigOption<String> ALERTS_COLLECTION =
            ConfigOptions.key("store.collection.alerts")
                    .stringType()
                    .defaultValue("alerts")
                    .withDescription(
                            "Alerts raised by the rules (docs/alerts.md), one document per alert id.");
    public static final ConfigOption<String> KAFKA_ALERTS_TOPIC =
            ConfigOptions.key("kafka.topic.alerts")
                    .stringType()
                    .defaultValue("audit.alerts")
                    .withDescription(
                            "Topic the alerts are published to, keyed by alert id (a replay may publish an id again).");

    /**
     * The stream's formats by name (io.auditpipe.flink.stream.StreamFormat, whose test holds the
     * two equal).
     */
    public static final List<String> STREAM_FORMAT_NAMES = List.of("auditpipe", "ocsf", "ecs");

    public static final ConfigOption<String> STREAM_FORMATS =
            ConfigOptions.key("stream.formats")
                    .stringType()
                    .defaultValue("")
                    .withDescription(
                            "The event stream (docs/stream.md): a comma-separated list of the formats every stored event"
                                    + " is published in, exactly once (Kafka transactions committed with the checkpoints): auditpipe (the"
                                    + " stored document, to kafka.topic.events), ocsf (OCSF 1.8.0, events and alerts, to kafka.topic.ocsf),"
                                    + " ecs (ECS with OpenTelemetry's db.* attributes, events and alerts, to kafka.topic.ecs). Empty: no stream.");
    public static final ConfigOption<String> STREAM_TRANSACTIONAL_ID_PREFIX =
            ConfigOptions.key("stream.transactional-id-prefix")
                    .stringType()
                    .defaultValue("auditpipe-stream-")
                    .withDescription(
                            "The stream's Kafka transactional ids begin with this, then the writer's name (events,"
                                    + " alerts, learned-alerts): with kafka.security.principals the job's user may use these ids (ACL"
                                    + " on the prefix). Two jobs writing the same Kafka need prefixes of their own.");
    public static final ConfigOption<String> KAFKA_EVENTS_TOPIC =
            ConfigOptions.key("kafka.topic.events")
                    .stringType()
                    .defaultValue("audit.events")
                    .withDescription(
                            "Topic of the stream's auditpipe format: each stored event's document, keyed by its id.");
    public static final ConfigOption<String> KAFKA_OCSF_TOPIC =
            ConfigOptions.key("kafka.topic.ocsf")
                    .stringType()
                    .defaultValue("audit.ocsf")
                    .withDescription(
                            "Topic of the stream's OCSF format: each stored event and each alert, keyed by its id.");
    public static final ConfigOption<String> KAFKA_ECS_TOPIC =
            ConfigOptions.key("kafka.topic.ecs")
                    .stringType()
                    .defaultValue("audit.ecs")
                    .withDescription(
                            "Topic of the stream's ECS format: each stored event and each alert, keyed by its id.");
    public static final ConfigOption<Integer> ALERT_BRUTE_FORCE_FAILURES =
            ConfigOptions.key("alerts.brute-force.failures")
                    .intType()
                    .defaultValue(5)
                    .withDescription(
                            "Failed logins of one account within alerts.brute-force.window that raise a brute_force alert.");
    public static final ConfigOption<Duration> ALERT_BRUTE_FORCE_WINDOW =
            ConfigOptions.key("alerts.brute-force.window")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(1))
                    .withDescription("Event-time window of the brute_force rule.");
    public static final ConfigOption<Integer> ALERT_SPRAY_ACCOUNTS =
            ConfigOptions.key("alerts.password-spray.accounts")
                    .intType()
                    .defaultValue(5)
                    .withDescription(
                            "Distinct accounts failing to log in from one origin (ip, else host) within"
                                    + " alerts.password-spray.window that raise a password_spray alert.");
    public static final ConfigOption<Duration> ALERT_SPRAY_WINDOW =
            ConfigOptions.key("alerts.password-spray.window")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(5))
                    .withDescription("Event-time window of the password_spray rule.");
    public static final ConfigOption<Integer> ALERT_LOGIN_AFTER_FAILURES =
            ConfigOptions.key("alerts.login-after-failures.failures")
                    .intType()
                    .defaultValue(3)
                    .withDescription(
                            "Failed logins of an account within alerts.login-after-failures.window before a successful"
                                    + " one that raise a login_after_failures alert.");
    public static final ConfigOption<Duration> ALERT_LOGIN_AFTER_FAILURES_WINDOW =
            ConfigOptions.key("alerts.login-after-failures.window")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(5))
                    .withDescription("Event-time window of the login_after_failures rule.");
    public static final ConfigOption<Duration> ALERT_UNAUTHORIZED_ACCESS_WINDOW =
            ConfigOptions.key("alerts.unauthorized-access.window")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(10))
                    .withDescription(
                            "One unauthorized_data_access alert per account, data class and window of this length"
                                    + " (event time); the alert counts the accesses of its first window only as far as they arrived"
                                    + " before it was raised.");
    public static final ConfigOption<Duration> ALERT_ALLOWED_LATENESS =
            ConfigOptions.key("alerts.allowed-lateness")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(2))
                    .withDescription(
                            "Failed logins older than the watermark by more than this are not evaluated by the login"
                                    + " rules (counted in metric loginsTooLateForAlerts); the events themselves are stored.");
    public static final ConfigOption<Duration> ALERT_RECORD_GAP_GRACE =
            ConfigOptions.key("alerts.record-gap.grace")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(30))
                    .withDescription(
                            "A record that arrives above the next expected number of its server's sequence waits this"
                                    + " long in event time (past the watermark) for the missing ones before record_gap is alerted.");
    public static final ConfigOption<Boolean> BASELINES_ENABLED =
            ConfigOptions.key("alerts.baselines.enabled")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Learn each principal's baseline (server and user) from the stored events and raise first_access,"
                                    + " off_hours, volume_spike and new_origin against it (docs/alerts.md \"Learned baselines\").");
    public static final ConfigOption<Duration> BASELINES_LEARNING =
            ConfigOptions.key("alerts.baselines.learning")
                    .durationType()
                    .defaultValue(Duration.ofDays(7))
                    .withDescription(
                            "How long (event time, from a principal's first event) its baseline learns before the learned"
                                    + " rules judge its events.");
    public static final ConfigOption<Duration> BASELINES_FORGET_AFTER =
            ConfigOptions.key("alerts.baselines.forget-after")
                    .durationType()
                    .defaultValue(Duration.ofDays(35))
                    .withDescription(
                            "A principal with no event for this long (event time) is forgotten: its baseline is cleared and"
                                    + " learns again from its next event. Longer than alerts.baselines.learning.");
    public static final ConfigOption<Integer> BASELINES_USUAL_HOUR_DAYS =
            ConfigOptions.key("alerts.baselines.usual-hour-days")
                    .intType()
                    .defaultValue(2)
                    .withDescription(
                            "An hour of the day (UTC) is one a principal works in once it was active in it on this many"
                                    + " days; so is the hour before and after it.");
    public static final ConfigOption<String> BASELINES_OFF_HOURS_REFERENCE =
            ConfigOptions.key("alerts.baselines.off-hours.reference")
                    .stringType()
                    .defaultValue("learned")
                    .withDescription(
                            "What off_hours compares an event's hour with: learned (the hours the principal works in) or"
                                    + " business-hours (compliance.business-hours; judged from a principal's first event, no learning).");
    public static final ConfigOption<Integer> BASELINES_VOLUME_MIN_HOURS =
            ConfigOptions.key("alerts.baselines.volume.min-hours")
                    .intType()
                    .defaultValue(24)
                    .withDescription(
                            "Active hours (clock hours with a record of the principal) its baseline holds before an hour's"
                                    + " volume is judged.");
    public static final ConfigOption<Double> BASELINES_VOLUME_FACTOR =
            ConfigOptions.key("alerts.baselines.volume.factor")
                    .doubleType()
                    .defaultValue(3.0)
                    .withDescription(
                            "volume_spike: an hour's records reach this many times the principal's mean per active hour...");
    public static final ConfigOption<Double> BASELINES_VOLUME_SIGMAS =
            ConfigOptions.key("alerts.baselines.volume.sigmas")
                    .doubleType()
                    .defaultValue(3.0)
                    .withDescription("...and this many standard deviations above that mean...");
    public static final ConfigOption<Integer> BASELINES_VOLUME_MIN_RECORDS =
            ConfigOptions.key("alerts.baselines.volume.min-records")
                    .intType()
                    .defaultValue(100)
                    .withDescription("...and at least this many records.");
    public static final ConfigOption<Integer> BASELINES_MAX_ORIGINS =
            ConfigOptions.key("alerts.baselines.max-origins")
                    .intType()
                    .defaultValue(50)
                    .withDescription(
                            "Origins (ip, else host) remembered per administrator; past it the least recently seen is"
                                    + " forgotten (and raises new_origin when it comes back).");
    public static final ConfigOption<Integer> BASELINES_MAX_OBJECTS =
            ConfigOptions.key("alerts.baselines.max-objects")
                    .intType()
                    .defaultValue(500)
                    .withDescription(
                            "Classified tables and data classes remembered per principal; past it a new one is neither"
                                    + " learned nor alerted.");
    public static final ConfigOption<String> ALERT_WEBHOOK_URL =
            ConfigOptions.key("alerts.webhook.url")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Optional: each alert is POSTed here as JSON (the document of the alerts collection).");
    public static final ConfigOption<String> ALERT_WEBHOOK_SECRET =
            ConfigOptions.key("alerts.webhook.secret")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Optional: each webhook POST carries X-Auditpipe-Signature: sha256=<hex HMAC-SHA256 of the"
                                    + " body under this key>, for the receiver to check (docs/alerts.md).");
    public static final ConfigOption<Duration> ALERT_WEBHOOK_TIMEOUT =
            ConfigOptions.key("alerts.webhook.timeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(5))
                    .withDescription("Connect and response timeout of one webhook POST.");
    public static final ConfigOption<Integer> ALERT_WEBHOOK_RETRIES =
            ConfigOptions.key("alerts.webhook.retries")
                    .intType()
                    .defaultValue(3)
                    .withDescription(
                            "Retries of a failed webhook POST (backoff 1 s, doubling). The webhook never holds up the"
                                    + " pipeline: at most alerts.webhook.queue alerts wait; beyond that, and after the last retry, an"
                                    + " alert is not POSTed (metrics webhookDropped, webhookFailed) and stays in the collection and topic.");
    public static final ConfigOption<Integer> ALERT_WEBHOOK_QUEUE =
            ConfigOptions.key("alerts.webhook.queue")
                    .intType()
                    .defaultValue(1000)
                    .withDescription("Most alerts waiting to be POSTed to the webhook.");
    public static final ConfigOption<String> CHAIN_HEADS_COLLECTION =
            ConfigOptions.key("store.collection.chain-heads")
                    .stringType()
                    .defaultValue("chain_heads")
                    .withDescription(
                            "Collection of the tamper-evidence chain's heads (docs/archive.md), one insert per server per"
                                    + " head interval.");
    public static final ConfigOption<String> SERVERS_COLLECTION =
            ConfigOptions.key("store.collection.servers")
                    .stringType()
                    .defaultValue("servers")
                    .withDescription(
                            "One document per server that ever sent an event ({_id, value, server, last_event_time,"
                                    + " last_seq}), upserted with each chain head: the dashboards' server list and their audit-silence"
                                    + " indicator (a server silent for longer than the time range still shows).");
    public static final ConfigOption<String> KAFKA_LAG_COLLECTION =
            ConfigOptions.key("store.collection.kafka-lag")
                    .stringType()
                    .defaultValue("kafka_lag")
                    .withDescription(
                            "Samples of the job's consumer lag on the raw topic ({_id, at, topic, group, lag, partitions}),"
                                    + " one per kafka.lag-interval, for the pipeline-health dashboard; a small capped collection.");
    public static final ConfigOption<Duration> KAFKA_LAG_INTERVAL =
            ConfigOptions.key("kafka.lag-interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(15))
                    .withDescription(
                            "How often the job samples its consumer lag on the raw topic (end offsets minus the offsets"
                                    + " committed on the last checkpoint) into store.collection.kafka-lag; 0 s: no samples.");
    public static final ConfigOption<Duration> CHAIN_HEAD_INTERVAL =
            ConfigOptions.key("chain.head-interval")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(1))
                    .withDescription(
                            "How often a server whose chain grew gets a head (its last link's number and digest) in the"
                                    + " chain-heads collection and the archive's manifest. Rewriting events is detectable from the first"
                                    + " head after them, so this bounds how many of the newest events only the chain itself protects.");
    public static final ConfigOption<String> CHAIN_SIGNING_KEY_FILE =
            ConfigOptions.key("chain.signing-key-file")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "A file, readable where the job's tasks run, with the Ed25519 key that signs every chain head:"
                                    + " PEM blocks PRIVATE KEY (PKCS#8) and PUBLIC KEY (docs/security.md). Whoever holds the store's"
                                    + " credentials cannot forge a signed head; auditpipe verify checks them with the public key."
                                    + " Unset: heads are unsigned.");
    public static final ConfigOption<String> CHAIN_LINK_KEY_FILE =
            ConfigOptions.key("chain.link-key-file")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "A file, readable where the job's tasks run, with the key that authenticates every link of"
                                    + " the chain: 64 hex digits on a line, the first key links, later lines are former keys"
                                    + " (docs/security.md). Each stored event carries chain_mac, an HMAC-SHA-256 of its link that"
                                    + " whoever holds only the store's credentials cannot make; auditpipe verify checks it with the"
                                    + " same file. Unset: links carry no MAC.");
    public static final ConfigOption<String> ARCHIVE_PATH =
            ConfigOptions.key("archive.path")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Where the archive is written (docs/archive.md): a local directory (file:///...) or any file"
                                    + " system Flink has a plugin for (s3://bucket/prefix). Events as Parquet under"
                                    + " events/server=<s>/date=<yyyy-mm-dd>/, chain heads as JSON lines under manifest/chain-heads/,"
                                    + " committed on each checkpoint. Unset: no archive.");
    public static final ConfigOption<String> JOB_NAME =
            ConfigOptions.key("job.name")
                    .stringType()
                    .defaultValue("auditpipe")
                    .withDescription("Name of the Flink job.");

    /** All options, in declaration order (for validation and generated docs). */
    public static List<ConfigOption<?>> all() {
        List<ConfigOption<?>> out = new ArrayList<>();
        for (Field f : optionFields()) {
            try {
                out.add((ConfigOption<?>) f.get(null));
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }

    /**
     * The options without which the job cannot run; every other option has a default or is
     * optional.
     */
    public static final List<ConfigOption<String>> REQUIRED =
            List.of(KAFKA_BOOTSTRAP_SERVERS, STORE_URI);

    public static boolean isRequired(ConfigOption<?> o) {
        return REQUIRED.stream().anyMatch(r -> r.key().equals(o.key()));
    }

    /**
     * An option's value type, as the contract names it: string, integer, number, boolean or
     * duration.
     */
    public static String typeName(ConfigOption<?> o) {
        for (Field f : optionFields()) {
            try {
                if (f.get(null) == o) {
                    Type t = ((ParameterizedType) f.getGenericType()).getActualTypeArguments()[0];
                    if (t == String.class) return "string";
                    if (t == Integer.class || t == Long.class) return "integer";
                    if (t == Double.class) return "number";
                    if (t == Boolean.class) return "boolean";
                    if (t == Duration.class) return "duration";
                    throw new IllegalStateException(
                            "option " + o.key() + " has a type the contract does not name: " + t);
                }
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalArgumentException("not an option of the job: " + o.key());
    }

    /**
     * An option's default as the job would read it from its properties (durations as "10 s"); null
     * when it has none.
     */
    public static String defaultText(ConfigOption<?> o) {
        if (!o.hasDefaultValue()) return null;
        Object v = o.defaultValue();
        return v instanceof Duration d ? TimeUtils.formatWithHighestUnit(d) : String.valueOf(v);
    }

    /**
     * An option's description as plain text (each is one text block, written with
     * withDescription(String)).
     */
    public static String descriptionText(ConfigOption<?> o) {
        StringBuilder b = new StringBuilder();
        for (var block : o.description().getBlocks()) {
            if (!(block instanceof org.apache.flink.configuration.description.TextElement t)
                    || !t.getElements().isEmpty()) {
                throw new IllegalStateException(
                        "option " + o.key() + ": a description of plain text only, please");
            }
            b.append(t.getFormat());
        }
        return b.toString();
    }

    private static List<Field> optionFields() {
        List<Field> out = new ArrayList<>();
        for (Field f : JobOptions.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())
                    && ConfigOption.class.isAssignableFrom(f.getType())) {
                out.add(f);
            }
        }
        return out;
    }

    /** The job options and Flink's own settings read from one properties file. */
    public static final class Loaded {
        public final Configuration job;
        public final Configuration flink;

        Loaded(Configuration job, Configuration flink) {
            this.job = job;
            this.flink = flink;
        }
    }

    public static Loaded load(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            Properties p = new Properties();
            p.load(new InputStreamReader(in, StandardCharsets.UTF_8));
            Map<String, String> m = new TreeMap<>();
            for (String k : p.stringPropertyNames()) {
                m.put(k, p.getProperty(k));
            }
            return load(m, file.toString());
        }
    }

    /**
     * Validates and splits the entries.
     *
     * @throws IllegalArgumentException naming the bad key and what is wrong with it
     */
    public static Loaded load(Map<String, String> entries, String origin) {
        Map<String, ConfigOption<?>> byKey = new LinkedHashMap<>();
        for (ConfigOption<?> o : all()) {
            byKey.put(o.key(), o);
        }
        Configuration job = new Configuration();
        Configuration flink = new Configuration();
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> e : entries.entrySet()) {
            String key = e.getKey();
            if (key.startsWith(FLINK_PREFIX)) {
                flink.setString(key.substring(FLINK_PREFIX.length()), e.getValue());
                continue;
            }
            if (key.startsWith(KAFKA_CLIENT_PREFIX)
                    && key.length() > KAFKA_CLIENT_PREFIX.length()) {
                job.setString(key, e.getValue());
                continue;
            }
            if (key.startsWith(COMPLIANCE_PREFIX)) {
                job.setString(key, e.getValue()); // validated below, all together
                continue;
            }
            ConfigOption<?> option = byKey.get(key);
            if (option == null) {
                problems.add(
                        "unknown option '"
                                + key
                                + "' (known: "
                                + byKey.keySet()
                                + ", or flink.<flink option>)");
                continue;
            }
            job.setString(key, e.getValue());
            try {
                job.get(option);
            } catch (RuntimeException ex) {
                problems.add(
                        "option '"
                                + key
                                + "' has a bad value '"
                                + e.getValue()
                                + "': "
                                + rootMessage(ex));
            }
        }
        for (ConfigOption<String> required : REQUIRED) {
            if (!job.contains(required) || job.get(required).isBlank()) {
                problems.add(
                        "option '" + required.key() + "' is required: " + required.description());
            }
        }
        try {
            compliance(job);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        positive(job, SINK_BATCH_SIZE, problems);
        positive(job, SINK_MAX_RETRIES, problems);
        positive(job, ALERT_BRUTE_FORCE_FAILURES, problems);
        positive(job, ALERT_SPRAY_ACCOUNTS, problems);
        positive(job, ALERT_LOGIN_AFTER_FAILURES, problems);
        positive(job, ALERT_WEBHOOK_QUEUE, problems);
        for (String format : job.get(STREAM_FORMATS).split(",")) {
            if (!format.isBlank() && !STREAM_FORMAT_NAMES.contains(format.trim())) {
                problems.add(
                        "option '"
                                + STREAM_FORMATS.key()
                                + "': '"
                                + format.trim()
                                + "' is not a stream format (one of "
                                + String.join(", ", STREAM_FORMAT_NAMES)
                                + ")");
            }
        }
        if (job.contains(ALERT_WEBHOOK_URL)) {
            String url = job.get(ALERT_WEBHOOK_URL);
            if (!url.startsWith("http://") && !url.startsWith("https://")) {
                problems.add(
                        "option '"
                                + ALERT_WEBHOOK_URL.key()
                                + "' must be an http:// or https:// URL, got '"
                                + url
                                + "'");
            }
        }
        try {
            if (job.get(DEAD_LETTER_MAX_MESSAGE_BYTES) < DEAD_LETTER_MIN_MESSAGE_BYTES) {
                problems.add(
                        "option '"
                                + DEAD_LETTER_MAX_MESSAGE_BYTES.key()
                                + "' must be at least "
                                + DEAD_LETTER_MIN_MESSAGE_BYTES
                                + ", got "
                                + job.get(DEAD_LETTER_MAX_MESSAGE_BYTES));
            }
        } catch (RuntimeException alreadyReported) {
            // the bad value was reported above
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(
                    "invalid job configuration "
                            + origin
                            + ":\n  - "
                            + String.join("\n  - ", problems));
        }
        return new Loaded(job, flink);
    }

    private static void positive(Configuration c, ConfigOption<Integer> o, List<String> problems) {
        try {
            if (c.get(o) <= 0) {
                problems.add("option '" + o.key() + "' must be positive, got " + c.get(o));
            }
        } catch (RuntimeException alreadyReported) {
            // the bad value was reported above
        }
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage();
    }

    /** Markdown reference of every option, for docs/job-options.md. */
    public static String markdownReference() {
        StringBuilder b = new StringBuilder();
        b.append("| option | type | default | description |\n|---|---|---|---|\n");
        for (ConfigOption<?> o : all()) {
            String dflt = defaultText(o);
            b.append("| `")
                    .append(o.key())
                    .append("` | ")
                    .append(typeName(o))
                    .append(" | ")
                    .append(
                            isRequired(o)
                                    ? "(required)"
                                    : dflt == null ? "(none)" : "`" + dflt + "`")
                    .append(" | ")
                    .append(
                            descriptionText(o)
                                    .replace("|", "\\|")
                                    .replace("<", "&lt;")
                                    .replace(">", "&gt;"))
                    .append(" |\n");
        }
        for (Map.Entry<String, String> p : PREFIXES.entrySet()) {
            b.append("| `")
                    .append(p.getKey())
                    .append("<...>` | | | ")
                    .append(p.getValue())
                    .append(" |\n");
        }
        return b.toString();
    }

    /** The keys that are families rather than one option, with what they hold. */
    public static final Map<String, String> PREFIXES = prefixes();

    private static Map<String, String> prefixes() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(
                FLINK_PREFIX,
                "A Flink setting, passed to Flink without the prefix (the local stack sets the REST port,"
                        + " checkpoint directory and the checkpoint to restore; a real cluster usually needs none).");
        m.put(
                KAFKA_CLIENT_PREFIX,
                "A Kafka client property for every Kafka client of the job (security.protocol,"
                        + " sasl.mechanism, sasl.jaas.config, ssl.truststore.location, ...); the CLI writes them from the config's"
                        + " kafka.security. One given here wins over the job's own: its sources' fetch.max.wait.ms "
                        + SOURCE_FETCH_MAX_WAIT_MS
                        + ".");
        m.put(
                COMPLIANCE_PREFIX,
                "Data classes, principals, masking, change windows and business hours"
                        + " (io.auditpipe.enrich.ComplianceSettings.KEYS, docs/compliance.md); the CLI writes them from the"
                        + " config's compliance section.");
        return java.util.Collections.unmodifiableMap(m);
    }
}
