package io.auditpipe.flink.sink;

import java.io.IOException;
import java.io.Serializable;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/**
 * A sink that tells a counter of each record before another sink writes it: imported history counts
 * its dead letters so, by stage and reason, for the import's summary ({@code ImportJob}).
 */
public final class CountedSink<T> implements Sink<T> {
    private static final long serialVersionUID = 1L;

    /** Hears of each record. */
    @FunctionalInterface
    public interface Counter<T> extends Serializable {
        void count(T element);
    }

    private final Sink<T> inner;
    private final Counter<T> counter;

    public CountedSink(Sink<T> inner, Counter<T> counter) {
        this.inner = inner;
        this.counter = counter;
    }

    @Override
    public SinkWriter<T> createWriter(WriterInitContext context) throws IOException {
        SinkWriter<T> writer = inner.createWriter(context);
        return new SinkWriter<>() {
            @Override
            public void write(T element, Context c) throws IOException, InterruptedException {
                counter.count(element);
                writer.write(element, c);
            }

            @Override
            public void writeWatermark(Watermark watermark)
                    throws IOException, InterruptedException {
                writer.writeWatermark(watermark);
            }

            @Override
            public void flush(boolean endOfInput) throws IOException, InterruptedException {
                writer.flush(endOfInput);
            }

            @Override
            public void close() throws Exception {
                writer.close();
            }
        };
    }
}
