package io.auditpipe.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/** A test sink that keeps what it receives, by name, in this JVM (the MiniCluster runs here). */
class CollectingSink<T> implements Sink<T> {
    private static final long serialVersionUID = 1L;
    private static final Map<String, ConcurrentLinkedQueue<Object>> RESULTS =
            new ConcurrentHashMap<>();

    private final String name;

    CollectingSink(String name) {
        this.name = name;
        RESULTS.put(name, new ConcurrentLinkedQueue<>());
    }

    @SuppressWarnings("unchecked")
    List<T> received() {
        return new ArrayList<>(
                (ConcurrentLinkedQueue<T>) (ConcurrentLinkedQueue<?>) RESULTS.get(name));
    }

    @Override
    public SinkWriter<T> createWriter(WriterInitContext context) {
        ConcurrentLinkedQueue<Object> out = RESULTS.get(name);
        return new SinkWriter<>() {
            @Override
            public void write(T element, Context ctx) {
                out.add(element);
            }

            @Override
            public void flush(boolean endOfInput) {}

            @Override
            public void close() {}
        };
    }
}
