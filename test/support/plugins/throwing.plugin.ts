/** A plugin whose module fails while it is imported (a missing dependency, a bad build). */
throw new Error('the plugin could not find its model file');
