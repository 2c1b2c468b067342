package savedmodel

// CheckDir runs the loader's checks on the DataView in dir (for the
// fuzz target and attack tests), without loading it into a session.
func CheckDir(dir string, opts ...LoadOptions) (*Metadata, error) {
	o, err := loadOpts(opts)
	if err != nil {
		return nil, err
	}
	files, digest, err := readDir(dir, dataViewLayout, o)
	if err != nil {
		return nil, err
	}
	c, err := checkFiles(files, digest)
	if err != nil {
		return nil, err
	}
	return c.meta, nil
}

// CheckFiles runs the loader's checks on files by path.
func CheckFiles(files map[string][]byte) error {
	_, err := checkFiles(files, digestOf(files))
	return err
}
