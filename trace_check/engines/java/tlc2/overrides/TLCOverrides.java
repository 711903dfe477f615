// txconform: the operators TLC takes from Java (TLC 2.15 loads this class by its name).
package tlc2.overrides;

public final class TLCOverrides implements ITLCOverrides {
    @SuppressWarnings("rawtypes")
    @Override
    public Class[] get() {
        return new Class[] { txconform.TraceLoad.class };
    }
}
