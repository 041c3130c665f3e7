package io.auditpipe.flink.records;

import io.auditpipe.parser.AuditEvent;
import io.auditpipe.parser.ByteScan;
import java.io.IOException;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.types.StringValue;

/**
 * How an {@link IngestedEvent} crosses a shuffle (the whole event goes to its server's chain,
 * AuditPipeline). Flink's own choice, a PojoSerializer, sets each of some forty fields by
 * reflection and writes every string a char at a time (StringValue): together 12-18% of the job
 * alone's samples (profiled 2026-11-24). Here the fields are written in a fixed order, and a string
 * that is all ASCII, as nearly all of an audit record is, goes as its bytes (the JDK's encoding and
 * decoding of ASCII are intrinsics); any other string goes as StringValue writes it, so every
 * string, a lone surrogate included, comes back as it went.
 *
 * <p>Wire only: no state holds an IngestedEvent (and checkpoints are aligned, so no in-flight
 * record is kept in one); the snapshot exists because Flink asks every serializer for one.
 * IngestedEventSerializerTest fills every field of the three classes by reflection, so a field
 * added to them and not here fails it.
 */
public final class IngestedEventSerializer extends MutableSerializer<IngestedEvent> {
    private static final long serialVersionUID = 1L;
    public static final IngestedEventSerializer INSTANCE = new IngestedEventSerializer();

    private static final int NULL = -1;

    /** A string that is not all ASCII follows as StringValue writes it. */
    private static final int NOT_ASCII = -2;

    IngestedEventSerializer() {
        super(IngestedEvent::new, Snapshot::new);
    }

    @Override
    public IngestedEvent copy(IngestedEvent from) {
        if (from == null) return null;
        try {
            DataOutputSerializer out = new DataOutputSerializer(1024);
            serialize(from, out);
            return deserialize(new DataInputDeserializer(out.getSharedBuffer(), 0, out.length()));
        } catch (IOException e) {
            throw new IllegalStateException("copying " + from, e); // in memory: cannot happen
        }
    }

    @Override
    public void serialize(IngestedEvent r, DataOutputView out) throws IOException {
        writeEvent(r.event, out);
        KafkaOrigin o = r.origin;
        out.writeBoolean(o != null);
        if (o != null) {
            writeString(o.topic, out);
            out.writeInt(o.partition);
            out.writeLong(o.offset);
            out.writeLong(o.timestampMillis);
        }
        writeString(r.lineSha256, out);
        writeString(r.original, out);
        out.writeBoolean(r.eventTimeTrusted);
        writeString(r.chain, out);
        out.writeLong(r.chainSeq);
        writeString(r.chainDigest, out);
        writeString(r.chainMac, out);
    }

    @Override
    public IngestedEvent deserialize(DataInputView in) throws IOException {
        IngestedEvent r = new IngestedEvent();
        r.event = readEvent(in);
        if (in.readBoolean()) {
            r.origin = new KafkaOrigin(readString(in), in.readInt(), in.readLong(), in.readLong());
        }
        r.lineSha256 = readString(in);
        r.original = readString(in);
        r.eventTimeTrusted = in.readBoolean();
        r.chain = readString(in);
        r.chainSeq = in.readLong();
        r.chainDigest = readString(in);
        r.chainMac = readString(in);
        return r;
    }

    private static void writeEvent(AuditEvent e, DataOutputView out) throws IOException {
        out.writeBoolean(e != null);
        if (e == null) return;
        writeString(e.id, out);
        writeString(e.server, out);
        writeString(e.format, out);
        writeString(e.sourceFile, out);
        writeString(e.collector, out);
        writeString(e.recordId, out);
        out.writeLong(e.eventTimeMillis);
        writeString(e.eventName, out);
        writeString(e.commandClass, out);
        out.writeBoolean(e.connectionId != null);
        if (e.connectionId != null) out.writeLong(e.connectionId);
        out.writeBoolean(e.status != null);
        if (e.status != null) out.writeInt(e.status);
        writeString(e.sqltext, out);
        writeString(e.user, out);
        writeString(e.userRaw, out);
        writeString(e.privUser, out);
        writeString(e.osUser, out);
        writeString(e.osLogin, out);
        writeString(e.proxyUser, out);
        writeString(e.host, out);
        writeString(e.ip, out);
        writeString(e.db, out);
        writeString(e.authOutcome, out);
        if (e.extra == null) {
            out.writeInt(NULL);
        } else {
            out.writeInt(e.extra.size());
            for (Map.Entry<String, String> x : e.extra.entrySet()) {
                writeString(x.getKey(), out);
                writeString(x.getValue(), out);
            }
        }
        writeString(e.category, out);
        writeString(e.action, out);
        writeList(e.tables, out);
        writeString(e.tablesError, out);
        writeList(e.dataClasses, out);
        writeString(e.principalClass, out);
        writeList(e.accessViolations, out);
        writeList(e.controls, out);
        writeList(e.masked, out);
        writeBoolean(e.inChangeWindow, out);
        writeBoolean(e.afterHours, out);
    }

    private static AuditEvent readEvent(DataInputView in) throws IOException {
        if (!in.readBoolean()) return null;
        AuditEvent e = new AuditEvent();
        e.id = readString(in);
        e.server = readString(in);
        e.format = readString(in);
        e.sourceFile = readString(in);
        e.collector = readString(in);
        e.recordId = readString(in);
        e.eventTimeMillis = in.readLong();
        e.eventName = readString(in);
        e.commandClass = readString(in);
        e.connectionId = in.readBoolean() ? in.readLong() : null;
        e.status = in.readBoolean() ? in.readInt() : null;
        e.sqltext = readString(in);
        e.user = readString(in);
        e.userRaw = readString(in);
        e.privUser = readString(in);
        e.osUser = readString(in);
        e.osLogin = readString(in);
        e.proxyUser = readString(in);
        e.host = readString(in);
        e.ip = readString(in);
        e.db = readString(in);
        e.authOutcome = readString(in);
        int extras = in.readInt();
        if (extras == NULL) {
            e.extra = null;
        } else {
            e.extra = new LinkedHashMap<>(Math.max(4, extras * 2));
            for (int i = 0; i < extras; i++) e.extra.put(readString(in), readString(in));
        }
        e.category = readString(in);
        e.action = readString(in);
        e.tables = readList(in);
        e.tablesError = readString(in);
        e.dataClasses = readList(in);
        e.principalClass = readString(in);
        e.accessViolations = readList(in);
        e.controls = readList(in);
        e.masked = readList(in);
        e.inChangeWindow = readBoolean(in);
        e.afterHours = readBoolean(in);
        return e;
    }

    private static void writeList(List<String> l, DataOutputView out) throws IOException {
        if (l == null) {
            out.writeInt(NULL);
            return;
        }
        out.writeInt(l.size());
        for (String s : l) writeString(s, out);
    }

    private static List<String> readList(DataInputView in) throws IOException {
        int n = in.readInt();
        if (n == NULL) return null;
        List<String> l = new ArrayList<>(n);
        for (int i = 0; i < n; i++) l.add(readString(in));
        return l;
    }

    private static void writeBoolean(Boolean b, DataOutputView out) throws IOException {
        out.writeByte(b == null ? 2 : b ? 1 : 0);
    }

    private static Boolean readBoolean(DataInputView in) throws IOException {
        byte b = in.readByte();
        return b == 2 ? null : b == 1;
    }

    /**
     * An ASCII string as its length and bytes; null as {@link #NULL}; anything else as {@link
     * #NOT_ASCII} and StringValue's form. The UTF-8 encoding of a string is as long as the string
     * only if each char is ASCII or a lone surrogate (which the encoder makes a '?'): so a string
     * of that length is ASCII unless a '?' of the bytes is not a '?' of the string.
     */
    static void writeString(String s, DataOutputView out) throws IOException {
        if (s == null) {
            out.writeInt(NULL);
            return;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length == s.length() && questionMarksAreTheStrings(b, s)) {
            out.writeInt(b.length);
            out.write(b);
        } else {
            out.writeInt(NOT_ASCII);
            StringValue.writeString(s, out);
        }
    }

    private static boolean questionMarksAreTheStrings(byte[] b, String s) {
        for (int i = ByteScan.indexOf(b, '?', 0); i >= 0; i = ByteScan.indexOf(b, '?', i + 1)) {
            if (s.charAt(i) != '?') return false;
        }
        return true;
    }

    static String readString(DataInputView in) throws IOException {
        int n = in.readInt();
        if (n == NULL) return null;
        if (n == NOT_ASCII) return StringValue.readString(in);
        if (n < 0) throw new IOException("corrupt IngestedEvent: a string of length " + n);
        byte[] b = new byte[n];
        in.readFully(b);
        return new String(b, StandardCharsets.ISO_8859_1); // ASCII: the one-byte-per-char copy
    }

    /** No parameters: version 1 of this layout. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<IngestedEvent> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }

    /**
     * Makes Flink use this serializer wherever an IngestedEvent goes (IngestedEvent's
     * {@code @TypeInfo}).
     */
    public static final class Factory extends TypeInfoFactory<IngestedEvent> {
        @Override
        public TypeInformation<IngestedEvent> createTypeInfo(
                Type t, Map<String, TypeInformation<?>> genericParameters) {
            return new Info();
        }
    }

    /** The type information of an IngestedEvent: one opaque field, written by this serializer. */
    public static final class Info extends TypeInformation<IngestedEvent> {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean isBasicType() {
            return false;
        }

        @Override
        public boolean isTupleType() {
            return false;
        }

        @Override
        public int getArity() {
            return 1;
        }

        @Override
        public int getTotalFields() {
            return 1;
        }

        @Override
        public Class<IngestedEvent> getTypeClass() {
            return IngestedEvent.class;
        }

        @Override
        public boolean isKeyType() {
            return false;
        }

        @Override
        public org.apache.flink.api.common.typeutils.TypeSerializer<IngestedEvent> createSerializer(
                SerializerConfig config) {
            return INSTANCE;
        }

        @Override
        public String toString() {
            return "IngestedEvent(IngestedEventSerializer)";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Info;
        }

        @Override
        public int hashCode() {
            return Info.class.hashCode();
        }

        @Override
        public boolean canEqual(Object o) {
            return o instanceof Info;
        }
    }
}
