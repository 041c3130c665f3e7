package io.auditpipe.flink.records;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.parser.AuditEvent;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * IngestedEventSerializer gives back every field of IngestedEvent, its AuditEvent and KafkaOrigin:
 * they are filled by reflection (so a field added to a class and not to the serializer fails here),
 * with strings of every kind (ASCII with '?', other text, lone surrogates, empty, null).
 */
class IngestedEventSerializerTest {
    private static final String[] PIECES = {
        "SELECT * FROM t WHERE a = ?",
        "?",
        "é",
        "✓",
        "𝄞",
        "\ud834",
        "\udd1e",
        "x",
        "\"q\"\\",
        "\u0000",
        " ",
        "db-01",
        "\u00ff"
    };

    @Property(tries = 500)
    void everyFieldComesBack(@ForAll long seed) throws Exception {
        Random random = new Random(seed);
        IngestedEvent sent = fill(IngestedEvent.class, random);
        DataOutputSerializer out = new DataOutputSerializer(64);
        IngestedEventSerializer.INSTANCE.serialize(sent, out);
        IngestedEventSerializer.INSTANCE.serialize(
                sent, out); // two in a row: each read takes exactly its own bytes
        DataInputDeserializer in =
                new DataInputDeserializer(out.getSharedBuffer(), 0, out.length());
        assertSame(sent, IngestedEventSerializer.INSTANCE.deserialize(in), "");
        assertSame(sent, IngestedEventSerializer.INSTANCE.deserialize(in), "");
        assertEquals(0, in.available());
        assertSame(sent, IngestedEventSerializer.INSTANCE.copy(sent), "");
    }

    @Example
    void flinkUsesItForTheEventAndForTheSourcesRecord() {
        assertInstanceOf(
                IngestedEventSerializer.Info.class, TypeInformation.of(IngestedEvent.class));
        PojoTypeInfo<?> record = (PojoTypeInfo<?>) TypeInformation.of(ParsedRecord.class);
        assertInstanceOf(
                IngestedEventSerializer.Info.class,
                record.getTypeAt(record.getFieldIndex("event")));
    }

    @Example
    void nullsAndEmptiesComeBackAsTheyWent() throws Exception {
        IngestedEvent sent = new IngestedEvent();
        sent.event = new AuditEvent();
        sent.event.extra = null;
        sent.event.tables = List.of();
        IngestedEvent back = IngestedEventSerializer.INSTANCE.copy(sent);
        assertNull(back.origin);
        assertNull(back.event.extra);
        assertTrue(back.event.tables.isEmpty());
        assertSame(sent, back, "");
        assertNull(IngestedEventSerializer.INSTANCE.copy(new IngestedEvent()).event);
    }

    /** Field by field, the serialized ones (not static, not transient), into nested records. */
    private static void assertSame(Object sent, Object back, String path)
            throws IllegalAccessException {
        if (sent == null || back == null || !isRecord(sent.getClass())) {
            assertEquals(sent, back, path);
            return;
        }
        assertEquals(sent.getClass(), back.getClass(), path);
        for (Field f : serialized(sent.getClass())) {
            assertSame(f.get(sent), f.get(back), path + "." + f.getName());
        }
    }

    private static boolean isRecord(Class<?> c) {
        return c == IngestedEvent.class || c == AuditEvent.class || c == KafkaOrigin.class;
    }

    private static List<Field> serialized(Class<?> c) {
        List<Field> fields = new ArrayList<>();
        for (Field f : c.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers()) && !Modifier.isTransient(f.getModifiers())) {
                f.setAccessible(true);
                fields.add(f);
            }
        }
        return fields;
    }

    private static <T> T fill(Class<T> c, Random random) throws Exception {
        T o = c.getConstructor().newInstance();
        for (Field f : serialized(c)) f.set(o, valueOf(f, random));
        return o;
    }

    private static Object valueOf(Field f, Random random) throws Exception {
        Class<?> t = f.getType();
        boolean orNull = !t.isPrimitive() && random.nextInt(5) == 0;
        if (orNull) return null;
        if (t == String.class) return text(random);
        if (t == long.class || t == Long.class) return random.nextLong();
        if (t == int.class || t == Integer.class) return random.nextInt();
        if (t == boolean.class || t == Boolean.class) return random.nextBoolean();
        if (isRecord(t)) return fill(t, random);
        if (t == List.class || t == Map.class) {
            var args = ((ParameterizedType) f.getGenericType()).getActualTypeArguments();
            for (var a : args)
                assertEquals(String.class, a, f + ": the test fills only strings in collections");
            int n = random.nextInt(4);
            if (t == List.class) {
                List<String> l = new ArrayList<>();
                for (int i = 0; i < n; i++) l.add(text(random));
                return l;
            }
            Map<String, String> m = new LinkedHashMap<>();
            for (int i = 0; i < n; i++)
                m.put(text(random), random.nextInt(4) == 0 ? null : text(random));
            return m;
        }
        throw new AssertionError(
                f + ": a field of a type the test cannot fill; teach it (and the serializer)");
    }

    private static String text(Random random) {
        StringBuilder b = new StringBuilder();
        int pieces = random.nextInt(6);
        for (int i = 0; i < pieces; i++) {
            b.append(
                    random.nextInt(3) == 0
                            ? PIECES[random.nextInt(PIECES.length)]
                            : "plain ascii text " + random.nextInt());
        }
        return b.toString();
    }
}
