package io.auditpipe.flink.sink;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.auditpipe.flink.baselines.Profile;
import io.auditpipe.flink.baselines.ProfileSeeds;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * The stored baselines (the store's baselines collection), looked up by id: one read per principal
 * the job has no state of.
 */
public final class StoreProfileSeeds implements ProfileSeeds {
    private static final long serialVersionUID = 1L;

    private final String uri;
    private final String database;
    private final String collection;
    private transient MongoClient client;
    private transient MongoCollection<Document> baselines;

    /** The connection string the seeds are read with. */
    public String uri() {
        return uri;
    }

    public StoreProfileSeeds(String uri, String database, String collection) {
        this.uri = uri;
        this.database = database;
        this.collection = collection;
    }

    @Override
    public void open() {
        client =
                MongoClients.create(
                        MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(uri))
                                .applyToSocketSettings(
                                        s ->
                                                s.connectTimeout(10, TimeUnit.SECONDS)
                                                        .readTimeout(30, TimeUnit.SECONDS))
                                .applyToClusterSettings(
                                        s -> s.serverSelectionTimeout(10, TimeUnit.SECONDS))
                                .build());
        baselines = client.getDatabase(database).getCollection(collection);
    }

    @Override
    public Profile find(String server, String user) {
        Document d =
                baselines
                        .find(new Document("_id", StoreDocuments.baselineId(server, user)))
                        .first();
        return d == null ? null : StoreDocuments.profileOf(d);
    }

    @Override
    public void close() {
        if (client != null) client.close();
    }
}
