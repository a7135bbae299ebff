/// Kiosk's release, in one place: `kiosk --version` prints it and HAR exports name it as their creator.
public enum KioskVersion {
    /// The version number, e.g. "0.10.0".
    public static let current = "0.10.0"
}
