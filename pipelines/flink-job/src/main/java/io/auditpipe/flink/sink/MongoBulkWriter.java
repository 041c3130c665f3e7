package io.auditpipe.flink.sink;

import com.mongodb.ConnectionString;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.ThreadSafeSimpleCounter;
import org.apache.flink.metrics.groups.SinkWriterMetricGroup;
import org.bson.BSONException;
import org.bson.Document;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The writer of {@link MongoBulkSink}. Records are buffered in the task's mailbox thread; each full
 * batch is written, retried and sorted out ({@link WriteErrors}: copies, collisions, rejections
 * made dead letters by {@link StoreRejections}) on the writing thread of {@link BatchInFlight}, one
 * batch at a time, while the mailbox thread fills the next. {@link #flush} (before every
 * checkpoint) waits until the last batch is written.
 */
class MongoBulkWriter<T> implements SinkWriter<T> {
    private static final Logger LOG = LoggerFactory.getLogger(MongoBulkWriter.class);

    /**
     * One write per upserted document and request: when a batch holds several upserts of the same
     * {@code _id} (a stats row fired again before the flush), only the last one is kept, in its
     * place. Two upserts of one row in an unordered request could apply in either order, and a
     * partial failure would retry the older one after the newer had succeeded, leaving a stale
     * count.
     */
    static List<WriteModel<Document>> latestUpsertPerId(List<WriteModel<Document>> models) {
        Map<Object, Integer> lastIndex = new HashMap<>();
        for (int i = 0; i < models.size(); i++) {
            if (models.get(i) instanceof UpdateOneModel) {
                Object id =
                        ((Document) ((UpdateOneModel<Document>) models.get(i)).getFilter())
                                .get("_id");
                if (id != null) {
                    lastIndex.put(id, i);
                }
            }
        }
        if (lastIndex.isEmpty()) {
            return models;
        }
        List<WriteModel<Document>> out = new ArrayList<>(models.size());
        for (int i = 0; i < models.size(); i++) {
            WriteModel<Document> m = models.get(i);
            if (m instanceof UpdateOneModel) {
                Object id = ((Document) ((UpdateOneModel<Document>) m).getFilter()).get("_id");
                if (id != null && lastIndex.get(id) != i) {
                    continue;
                }
            }
            out.add(m);
        }
        return out;
    }

    /**
     * Upserts per request on FerretDB. FerretDB 1.24 (SQLite backend) holds a pooled SQLite
     * connection per update statement until the whole command ends; its pool has 100 connections,
     * and one update command of ~300 upserts next to any other writer deadlocks the server
     * (reproduced: docs/store.md). 25 per request keeps two parallel writers far below that. On
     * MongoDB the whole batch goes in one request.
     */
    static final int FERRETDB_MAX_UPDATES_PER_REQUEST = 25;

    private final MongoSinkSettings settings;
    private final MongoBulkSink.ToWriteModel<T> toWriteModel;
    private final FlushTimer flushTimer;
    private final MongoClient client;
    private final MongoCollection<Document> collection;
    private final Counter written;
    private final Counter retries;

    /**
     * Batches started, by what started them: the buffer full, the flush timer, a checkpoint (or the
     * end of input).
     */
    private final Counter fullBatches;

    private final Counter timerBatches;
    private final Counter checkpointBatches;
    private final int maxUpdatesPerRequest;
    private final boolean ferretDb;

    /** Filled by the mailbox thread only; handed over whole to {@link #batches}. */
    private List<WriteModel<Document>> buffer = new ArrayList<>();

    private final BatchInFlight batches;
    private volatile boolean closed;

    /** The documents the store cannot take, as dead letters. */
    private final StoreRejections rejections;

    /** Sorts out a bulk request's write errors. */
    private final WriteErrors errors;

    MongoBulkWriter(
            MongoSinkSettings settings,
            MongoBulkSink.ToWriteModel<T> toWriteModel,
            ProcessingTimeService time,
            SinkWriterMetricGroup metrics) {
        this.settings = settings;
        this.toWriteModel = toWriteModel;
        this.flushTimer = new FlushTimer(time, settings.flushIntervalMillis, this::onFlushTimer);
        this.client =
                MongoClients.create(
                        MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(settings.uri))
                                // a store that stops answering becomes a retried error, never an
                                // endless wait
                                .applyToSocketSettings(
                                        s ->
                                                s.connectTimeout(10, TimeUnit.SECONDS)
                                                        .readTimeout(
                                                                (int) settings.requestTimeoutMillis,
                                                                TimeUnit.MILLISECONDS))
                                .applyToClusterSettings(
                                        s -> s.serverSelectionTimeout(30, TimeUnit.SECONDS))
                                .codecRegistry(
                                        EncodedDocument
                                                // documents encoded before the batch: copied, not
                                                // encoded again
                                                .codecRegistry())
                                .build());
        this.collection = client.getDatabase(settings.database).getCollection(settings.collection);
        this.ferretDb = isFerretDb();
        this.maxUpdatesPerRequest = ferretDb ? FERRETDB_MAX_UPDATES_PER_REQUEST : Integer.MAX_VALUE;
        // counted by the writing threads, several at once when more than one batch is in flight
        this.written = metrics.counter("documentsWritten", new ThreadSafeSimpleCounter());
        this.retries = metrics.counter("writeRetries", new ThreadSafeSimpleCounter());
        this.rejections =
                new StoreRejections(
                        settings,
                        client.getDatabase(settings.database)
                                .getCollection(settings.deadLetterCollection),
                        metrics.counter("documentsRejected", new ThreadSafeSimpleCounter()));
        this.errors =
                new WriteErrors(
                        settings,
                        collection,
                        ferretDb,
                        rejections,
                        written,
                        metrics.counter("duplicatesIgnored", new ThreadSafeSimpleCounter()),
                        metrics.counter("idCollisions", new ThreadSafeSimpleCounter()));
        this.fullBatches = metrics.counter("batchesFull");
        this.timerBatches = metrics.counter("batchesOnFlushTimer");
        this.checkpointBatches = metrics.counter("batchesOnCheckpoint");
        // more than one batch at once on FerretDB only: a capped collection keeps the order batches
        // arrive in, and MongoDB trims its own by that order, where the chain needs a server's
        // links removed oldest first; the local FerretDB is trimmed by auditpipe's supervisor,
        // which keeps that (store.chain_prefix_bound)
        this.batches =
                new BatchInFlight(settings.collection, ferretDb ? settings.batchesInFlight : 1);
        // how long the task waited for the store: what the store holds back of the operators
        // chained before this sink
        metrics.gauge("storeWaitMillis", batches::waitedMillis);
        // how long the store had a batch of this writer's: beside the task's time, how much of it
        // the store was kept busy
        metrics.gauge("storeBusyMillis", batches::writingMillis);
    }

    /** Feature detection: buildInfo of FerretDB 1.x has "ferretdbVersion", of 2.x "ferretdb". */
    private boolean isFerretDb() {
        try {
            Document info = client.getDatabase("admin").runCommand(new Document("buildInfo", 1));
            boolean ferret = info.containsKey("ferretdbVersion") || info.containsKey("ferretdb");
            LOG.info(
                    "store for {} is {}",
                    settings.collection,
                    ferret ? "FerretDB" : "MongoDB " + info.get("version"));
            return ferret;
        } catch (MongoException e) {
            LOG.warn("buildInfo failed ({}); assuming FerretDB limits", e.getMessage());
            return true;
        }
    }

    /** The flush timer: the buffer as a batch; watched again while a batch is in flight. */
    private boolean onFlushTimer() throws IOException, InterruptedException {
        if (closed) {
            return false;
        }
        batches.throwIfFailed(); // a failed batch fails the job now, not at the next record
        flushBuffer(timerBatches);
        return batches.anyInFlight();
    }

    @Override
    public void write(T element, Context context) throws IOException, InterruptedException {
        buffer.add(toWriteModel.apply(element));
        if (buffer.size() >= settings.batchSize) {
            flushBuffer(fullBatches);
        }
        flushTimer.watch();
    }

    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
        flushBuffer(checkpointBatches);
        batches.awaitIdle();
        rejections.flush();
    }

    /**
     * Starts writing the buffer as one batch once the batch before it is written, counted in {@code
     * startedBy}.
     */
    private void flushBuffer(Counter startedBy) throws IOException, InterruptedException {
        if (buffer.isEmpty()) {
            return;
        }
        startedBy.inc();
        List<WriteModel<Document>> batch = buffer;
        buffer = new ArrayList<>(settings.batchSize);
        batches.start(() -> writeBatch(batch));
    }

    /**
     * On the writing thread: the batch in requests of at most {@link #maxUpdatesPerRequest}
     * upserts.
     */
    private void writeBatch(List<WriteModel<Document>> batch)
            throws IOException, InterruptedException {
        List<WriteModel<Document>> all = latestUpsertPerId(batch);
        boolean hasUpdates = all.get(0) instanceof UpdateOneModel;
        int chunk = hasUpdates ? maxUpdatesPerRequest : all.size();
        for (int from = 0; from < all.size(); from += chunk) {
            writeWithRetries(
                    new ArrayList<>(all.subList(from, Math.min(all.size(), from + chunk))));
        }
    }

    private void writeWithRetries(List<WriteModel<Document>> pending)
            throws IOException, InterruptedException {
        long backoff = settings.retryBackoffMillis;
        int attempt = 0;
        while (!pending.isEmpty()) {
            MongoException failure;
            try {
                collection.bulkWrite(pending, new BulkWriteOptions().ordered(false));
                written.inc(pending.size());
                return;
            } catch (MongoBulkWriteException e) {
                try {
                    pending = errors.sortOut(pending, e);
                } catch (MongoException lookupFailed) {
                    // the collision check could not read: the whole batch again
                    failure = lookupFailed;
                    pending = new ArrayList<>(pending);
                    attempt++;
                    if (attempt > settings.maxRetries) {
                        throw new IOException(
                                "checking duplicates in "
                                        + settings.collection
                                        + " failed after "
                                        + settings.maxRetries
                                        + " retries: "
                                        + failure.getMessage(),
                                failure);
                    }
                    retries.inc();
                    Thread.sleep(backoff);
                    backoff = Math.min(backoff * 2, settings.retryMaxBackoffMillis);
                    continue;
                }
                if (pending.isEmpty()) {
                    return;
                }
                failure = e;
            } catch (MongoException e) {
                if (WriteErrors.bsonCause(e) != null) {
                    pending = errors.rejectUnwritable(pending, e);
                    continue;
                }
                failure =
                        // network, timeout, server selection: the whole batch again (writes are
                        // idempotent)
                        e;
            } catch (BSONException e) {
                // the driver could not write a document as BSON (a NUL in a field name): no retry
                // cures it, and failing the job would replay the record and fail again, for good
                pending = errors.rejectUnwritable(pending, e);
                continue;
            }
            attempt++;
            if (attempt > settings.maxRetries) {
                throw new IOException(
                        "writing "
                                + pending.size()
                                + " documents to "
                                + settings.collection
                                + " failed after "
                                + settings.maxRetries
                                + " retries; the job restarts from its last"
                                + " checkpoint: "
                                + failure.getMessage(),
                        failure);
            }
            retries.inc();
            LOG.warn(
                    "bulk write to {} failed (attempt {} of {}), retrying {} documents in {} ms: {}",
                    settings.collection,
                    attempt,
                    settings.maxRetries,
                    pending.size(),
                    backoff,
                    failure.getMessage());
            Thread.sleep(backoff);
            backoff = Math.min(backoff * 2, settings.retryMaxBackoffMillis);
        }
    }

    @Override
    public void close() {
        closed = true;
        batches.close();
        rejections.close();
        client.close();
    }
}
