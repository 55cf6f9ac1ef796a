"""The preview: reading a URI as a client would and showing the outcome through the content renderers."""
