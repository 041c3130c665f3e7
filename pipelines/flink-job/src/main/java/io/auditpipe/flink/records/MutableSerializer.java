package io.auditpipe.flink.records;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * A hand-written serializer of a mutable value of variable length, written field by field: what
 * every such serializer of the job says alike. A subclass writes the value's fields ({@link
 * #serialize}, {@link #deserialize(DataInputView)}) and copies it ({@link #copy(Object)}); it
 * passes the value's constructor and its snapshot class's, which is what a checkpoint records of
 * it.
 */
public abstract class MutableSerializer<T> extends TypeSerializerSingleton<T> {
    private static final long serialVersionUID = 1L;

    private final SerializableSupplier<T> empty;
    private final SerializableSupplier<TypeSerializerSnapshot<T>> snapshot;

    /**
     * {@code empty}: a new value, its fields at their defaults ({@link #createInstance}); {@code
     * snapshot}: a new snapshot of this layout ({@link #snapshotConfiguration}).
     */
    protected MutableSerializer(
            SerializableSupplier<T> empty,
            SerializableSupplier<TypeSerializerSnapshot<T>> snapshot) {
        this.empty = empty;
        this.snapshot = snapshot;
    }

    @Override
    public final TypeSerializerSnapshot<T> snapshotConfiguration() {
        return snapshot.get();
    }

    @Override
    public final T createInstance() {
        return empty.get();
    }

    @Override
    public final boolean isImmutableType() {
        return false;
    }

    @Override
    public final T copy(T from, T reuse) {
        return copy(from);
    }

    @Override
    public final int getLength() {
        return -1;
    }

    @Override
    public final T deserialize(T reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    /** A value read and written again; a serializer that can pass the bytes on without it does. */
    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        serialize(deserialize(source), target);
    }
}
