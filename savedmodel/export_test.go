package savedmodel

// CheckDir runs the loader's checks on the DataView in dir (for the
// fuzz target and attack tests), without loading it into a session.
func CheckDir(dir string, opts ...LoadOptions) (*Metadata, error) {
	o, err := loadOpts(opts)
	if err != nil {
		return nil, err
	}
	files, err := readFiles(dir, o.maxBytes)
	if err != nil {
		return nil, err
	}
	c, err := checkFiles(files, o)
	if err != nil {
		return nil, err
	}
	return c.meta, nil
}

// CheckFiles runs the loader's checks on files by path.
func CheckFiles(files map[string][]byte) error {
	_, err := checkFiles(files, loadOptions{maxBytes: DefaultMaxFileBytes})
	return err
}
